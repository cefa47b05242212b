import { runPortsContract } from '#test/support/run-ports-contract.js';
import { MemoryRunBackend } from './memory-run-backend.js';

runPortsContract('memory', () => new MemoryRunBackend());
