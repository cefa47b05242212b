import { checkOutboundUrl, InvalidAllowlistEntryError, isForbiddenAddress, parseAllowlist, parseIPv4Loose, type Resolver } from './outbound-guard.js';

describe('parseIPv4Loose', () => {
  it.each([
    ['127.0.0.1', [127, 0, 0, 1]],
    ['2130706433', [127, 0, 0, 1]],
    ['0x7f000001', [127, 0, 0, 1]],
    ['0X7F.1', [127, 0, 0, 1]],
    ['0177.0.0.1', [127, 0, 0, 1]],
    ['0177.0.0.01', [127, 0, 0, 1]],
    ['127.1', [127, 0, 0, 1]],
    ['127.0.1', [127, 0, 0, 1]],
    ['127.0.0.1.', [127, 0, 0, 1]],
    ['0x7f.0x0.0x0.0x1', [127, 0, 0, 1]],
    ['017700000001', [127, 0, 0, 1]],
    ['0', [0, 0, 0, 0]],
    ['0x', [0, 0, 0, 0]],
    ['10.0x10203', [10, 1, 2, 3]],
    ['3232235777', [192, 168, 1, 1]],
  ])('reads %s as the WHATWG URL parser does', (text, octets) => {
    expect(parseIPv4Loose(text)).toEqual(octets);
    // The URL parser is the reference: the spellings must agree with it.
    expect(new URL(`http://${text}/`).hostname).toBe(octets.join('.'));
  });

  it.each(['256.0.0.1', '1.2.3.4.5', '4294967296', '08.0.0.1', '0x1g', 'example.com', '', '1..2', '127.0.0.256'])('rejects %s', (text) => {
    expect(parseIPv4Loose(text)).toBeNull();
  });
});

describe('isForbiddenAddress', () => {
  it.each([
    // loopback in every spelling
    '127.0.0.1', '127.255.255.254', '2130706433', '0x7f000001', '0177.0.0.1', '127.1', '0x7f.1', '017700000001', '127.0.0.1.',
    // private, link-local (cloud metadata), CGNAT, unspecified, broadcast, multicast, reserved
    '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '192.168.255.255', '0xa000001', '012.0.0.1',
    '169.254.169.254', '169.254.0.1', '2852039166', '100.64.0.1', '100.127.255.255',
    '0.0.0.0', '0', '0.1.2.3', '255.255.255.255', '224.0.0.1', '239.255.255.250', '240.0.0.1', '192.0.2.1', '198.18.0.1',
    // IPv6 loopback, unspecified, link-local, unique-local, multicast, site-local
    '::1', '[::1]', '0:0:0:0:0:0:0:1', '::', 'fe80::1', 'fe80::1%eth0', 'febf::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', 'fec0::1',
    // IPv4-mapped / compatible / translated forms of internal IPv4
    '::ffff:127.0.0.1', '::ffff:7f00:1', '[::ffff:7f00:1]', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '::ffff:10.0.0.1', '0:0:0:0:0:ffff:7f00:1',
    '::127.0.0.1', '::7f00:1', '::8.8.8.8', '::ffff:0:7f00:1',
    // NAT64 and 6to4 of internal IPv4, local-use NAT64, Teredo, documentation
    '64:ff9b::7f00:1', '64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b:1::808:808', '2002:7f00:1::1', '2002:a9fe:a9fe::', '2001::1', '2001:db8::1',
    // not an address at all: fail closed
    'localhost', 'example.com', '', '1.2.3.4.5', ':::1',
  ])('refuses %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '134744072', '0x08080808', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '192.169.0.1',
    '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])('allows public %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });
});

describe('parseAllowlist', () => {
  it('reads hosts, wildcards, IPs, CIDRs and host:port entries', () => {
    expect(parseAllowlist(['api.internal', '*.corp.example', '10.0.0.5', 'fd00::/8', '10.0.0.0/8', 'localhost:8080', '[::1]:9000', '127.0.0.1:3000']).map((r) => r.kind))
      .toEqual(['host', 'suffix', 'ip', 'cidr', 'cidr', 'host', 'ip', 'ip']);
  });

  it.each(['10.0.0.0/33', 'bad host!', '[nope]:80', 'host:0', 'host:70000', '1.2.3.4/x'])('refuses %s with a clear error', (entry) => {
    expect(() => parseAllowlist([entry])).toThrow(InvalidAllowlistEntryError);
  });
});

describe('checkOutboundUrl (no traffic: DNS is a fake)', () => {
  const dns: Record<string, string[]> = {
    'public.example': ['93.184.216.34'],
    'internal.example': ['10.1.2.3'],
    'mixed.example': ['93.184.216.34', '127.0.0.1'],
    'metadata.example': ['::ffff:169.254.169.254'],
    'v6.example': ['2606:4700::6810:84e5'],
  };
  const resolver: Resolver = async (host) => {
    const answer = dns[host];
    if (!answer) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return answer;
  };
  const check = (url: string, allowlist: string[] = []) => checkOutboundUrl(url, { allowlist, resolver });

  it('allows a public host and returns the address to pin', async () => {
    await expect(check('https://public.example/a')).resolves.toMatchObject({ ok: true, address: '93.184.216.34', family: 4 });
    await expect(check('http://v6.example/')).resolves.toMatchObject({ ok: true, family: 6 });
  });

  it.each([
    'http://127.0.0.1/', 'http://2130706433/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://127.1/', 'http://[::1]/',
    'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://169.254.169.254/latest/meta-data/', 'http://0.0.0.0:8000/',
    'http://internal.example/', 'http://mixed.example/', 'http://metadata.example/', 'http://LOCALHOST./',
  ])('refuses %s', async (url) => {
    const result = await check(url);
    expect(result.ok).toBe(false);
  });

  it('refuses other schemes and unresolvable hosts', async () => {
    await expect(check('file:///etc/passwd')).resolves.toMatchObject({ ok: false, reason: expect.stringContaining('scheme') });
    await expect(check('gopher://public.example/')).resolves.toMatchObject({ ok: false });
    await expect(check('http://nowhere.example/')).resolves.toMatchObject({ ok: false, reason: expect.stringContaining('ENOTFOUND') });
    await expect(check('not a url')).resolves.toMatchObject({ ok: false, reason: 'invalid URL' });
  });

  it('opens exactly what the allowlist names', async () => {
    await expect(check('http://internal.example/', ['internal.example'])).resolves.toMatchObject({ ok: true, address: '10.1.2.3' });
    await expect(check('http://internal.example/', ['10.0.0.0/8'])).resolves.toMatchObject({ ok: true });
    await expect(check('http://internal.example/', ['10.1.2.3'])).resolves.toMatchObject({ ok: true });
    await expect(check('http://internal.example/', ['10.1.2.4'])).resolves.toMatchObject({ ok: false });
    await expect(check('http://metadata.example/', ['169.254.169.254'])).resolves.toMatchObject({ ok: true, address: '169.254.169.254' });
    await expect(check('http://a.corp.example/', ['*.corp.example'])).resolves.toMatchObject({ ok: false });
    await expect(check('http://127.0.0.1:8080/', ['127.0.0.1:8080'])).resolves.toMatchObject({ ok: true });
    await expect(check('http://127.0.0.1:8081/', ['127.0.0.1:8080'])).resolves.toMatchObject({ ok: false });
    await expect(check('http://2130706433:8080/', ['127.0.0.1:8080'])).resolves.toMatchObject({ ok: true });
    await expect(check('http://[::1]:9000/', ['[::1]:9000'])).resolves.toMatchObject({ ok: true });
    await expect(check('http://127.0.0.1/', ['127.0.0.1:80'])).resolves.toMatchObject({ ok: true });
    await expect(check('http://127.0.0.1/', ['127.0.0.1:443'])).resolves.toMatchObject({ ok: false });
  });

  describe('a DNS lookup that never answers', () => {
    const seenSignals: (AbortSignal | undefined)[] = [];
    const silent: Resolver = (_host, signal) => {
      seenSignals.push(signal);
      return new Promise<string[]>(() => undefined);
    };

    it('is given up after lookupTimeoutMs, as a timeout', async () => {
      const result = await checkOutboundUrl('http://silent.example/', { resolver: silent, lookupTimeoutMs: 50 });
      expect(result).toMatchObject({ ok: false, interrupted: 'timeout', reason: expect.stringContaining('silent.example') });
      // The resolver is told, so one that can cancel its query does.
      expect(seenSignals.at(-1)?.aborted).toBe(true);
    }, 10_000);

    it('is given up when the caller aborts, before its own limit', async () => {
      const caller = new AbortController();
      const pending = checkOutboundUrl('http://silent.example/', { resolver: silent, lookupTimeoutMs: 600_000 }, caller.signal);
      caller.abort();
      await expect(pending).resolves.toMatchObject({ ok: false, interrupted: 'aborted' });
    }, 10_000);
  });

  it('does not let an allowlisted host name open an IP literal, nor the reverse', async () => {
    await expect(check('http://127.0.0.1/', ['localhost'])).resolves.toMatchObject({ ok: false });
    await expect(check('http://internal.example:81/', ['internal.example:80'])).resolves.toMatchObject({ ok: false });
  });
});
