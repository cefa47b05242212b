import { conversationStoreContract } from '#test/support/conversation-store-contract.js';
import { MemoryConversationStore } from './memory-conversation-store.js';

describe('MemoryConversationStore', () => {
  conversationStoreContract(async (now, cipher) => new MemoryConversationStore(now, cipher));
});
