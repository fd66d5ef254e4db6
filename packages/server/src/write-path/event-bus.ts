/** A listener; a promise it answers is awaited before `publish` resolves. */
export type Listener<T> = (message: T) => void | Promise<void>;

/**
 * A tiny typed in-process bus: one message type, listeners in subscription order. `publish` runs every
 * listener, waits for those that answer a promise, and rethrows the first failure only after all ran, so
 * one listener's failure never keeps the message from the others.
 */
export class EventBus<T> {
  private listeners: Listener<T>[] = [];

  /** Adds a listener; answers the function that removes it. */
  subscribe(listener: Listener<T>): () => void {
    this.listeners = [...this.listeners, listener];
    return () => this.unsubscribe(listener);
  }

  unsubscribe(listener: Listener<T>): void {
    this.listeners = this.listeners.filter((l) => l !== listener);
  }

  get size(): number {
    return this.listeners.length;
  }

  async publish(message: T): Promise<void> {
    const errors: unknown[] = [];
    const pending: Promise<void>[] = [];
    for (const listener of this.listeners) {
      try {
        const answer = listener(message);
        if (answer) pending.push(answer.catch((error: unknown) => void errors.push(error)));
      } catch (error) {
        errors.push(error);
      }
    }
    await Promise.all(pending);
    if (errors.length > 0) throw errors[0];
  }
}
