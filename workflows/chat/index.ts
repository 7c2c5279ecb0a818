// The chat module's workflows (shared/chat/module.ts declares them).
export { chatSession } from './chat-session.ts';
