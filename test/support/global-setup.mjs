// Placeholder replaced by the local-services harness.
export default async function globalSetup() {}
