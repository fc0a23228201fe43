'use strict';

/**
 * Messages a dispatcher sent, as the host decodes them, in order; `next` waits (up to `timeoutMs`) for the next one
 * that is not an RpcLog. Shared by the in-process harness and the conformance tests.
 */
class Inbox {
  /** @param {number} timeoutMs */
  constructor(timeoutMs) {
    this.timeoutMs = timeoutMs;
    /** @type {any[]} */
    this.messages = [];
    /** @type {(() => void) | undefined} */
    this.wake = undefined;
  }

  /** @param {any} message */
  push(message) {
    this.messages.push(message);
    if (this.wake) this.wake();
  }

  /** @param {string} waitingFor what the caller waits for, named in the timeout's error */
  async next(waitingFor) {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const message = this.messages.shift();
      if (message && message.content !== 'rpc_log') return message;
      if (message) continue;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${waitingFor} from the worker within ${this.timeoutMs} ms`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve(undefined);
        };
      });
      this.wake = undefined;
    }
  }
}

module.exports = { Inbox };
