/**
 * The most deliveries of one webhook in flight at once on this instance, however many slots are free: no
 * receiver is sent more than this many requests at once by one instance. Below it, a webhook gets its fair
 * share of the slots (see `fairShare`).
 */
export const PER_WEBHOOK = 16;

/**
 * How many of `concurrency` slots one webhook may hold while `active` webhooks (it included) have
 * deliveries in flight or due: an equal share of the slots with one share left over, at least 1 and at
 * most PER_WEBHOOK. The share left over is what lets a webhook that has work but no slot yet, a healthy
 * one among receivers that never answer, start at once: k webhooks at their share hold at most
 * k × concurrency / (k + 1) slots. As more webhooks get work the share shrinks; a webhook above it takes
 * no slot until its own sends end (each within the timeout), none is cut short.
 */
export function fairShare(concurrency: number, active: number): number {
  return Math.min(PER_WEBHOOK, Math.max(1, Math.floor(concurrency / (Math.max(1, active) + 1))));
}

/** Counts by webhook, and their total. */
class Tally {
  readonly byWebhook = new Map<string, number>();
  total = 0;

  add(webhookId: string): void {
    this.byWebhook.set(webhookId, (this.byWebhook.get(webhookId) ?? 0) + 1);
    this.total++;
  }

  remove(webhookId: string): void {
    const left = (this.byWebhook.get(webhookId) ?? 1) - 1;
    if (left <= 0) this.byWebhook.delete(webhookId);
    else this.byWebhook.set(webhookId, left);
    this.total = Math.max(0, this.total - 1);
  }
}

/** What a claim chose among the due deliveries it read. */
export interface Choice {
  readonly chosen: readonly string[];
  /** Webhook ids of the chosen deliveries, one per delivery: the slots held until they are sent. */
  readonly held: readonly string[];
  /** Deliveries were left for a webhook's share or for want of room: more may be due than was taken. */
  readonly capped: boolean;
}

/**
 * The slots of one instance's dispatcher (`concurrency` of them) and who holds them. A slot is held by a
 * send in flight, by a delivery a write reserved in its transaction (until the write commits and sends it,
 * or rolls back), or by a delivery a claim chose (until it is sent). Each webhook holds at most its fair
 * share, counting every webhook that holds a slot or has due work, so slow or hung receivers cannot take
 * every slot: a healthy webhook always finds one. In memory only, no clock, no I/O.
 */
export class DeliveryScheduler {
  private readonly sending = new Tally();
  private readonly reserved = new Tally();
  private readonly claiming = new Tally();

  constructor(private readonly concurrency: number) {}

  /** Slots held by nobody. */
  free(): number {
    return this.concurrency - this.sending.total - this.reserved.total - this.claiming.total;
  }

  /** Slots held, by webhook. */
  holding(): Map<string, number> {
    const held = new Map(this.sending.byWebhook);
    for (const tally of [this.reserved, this.claiming]) {
      for (const [id, n] of tally.byWebhook) held.set(id, (held.get(id) ?? 0) + n);
    }
    return held;
  }

  /** Sends in flight, by webhook (for the metrics). */
  sends(): ReadonlyMap<string, number> {
    return this.sending.byWebhook;
  }

  /** Takes a slot for a delivery a write queues, if the webhook and the instance have room. */
  reserve(webhookId: string): boolean {
    const held = this.holding();
    const forHook = held.get(webhookId) ?? 0;
    const share = fairShare(this.concurrency, held.size + (forHook === 0 ? 1 : 0));
    if (forHook >= share || this.free() <= 0) return false;
    this.reserved.add(webhookId);
    return true;
  }

  /** Gives back a write's reservation: it committed (its send now holds the slot) or rolled back. */
  unreserve(webhookId: string): void {
    this.reserved.remove(webhookId);
  }

  /**
   * Webhooks a claim's query may leave out: at their share already counting only those holding slots here
   * (the share can only shrink once the query shows webhooks with due work).
   */
  saturated(): string[] {
    const busy = this.holding();
    const share = fairShare(this.concurrency, busy.size);
    return [...busy].filter(([, n]) => n >= share).map(([id]) => id);
  }

  /**
   * Chooses among due deliveries (oldest first) at most `wanted`, and no more than there is room for now,
   * within each webhook's share counting every webhook that holds a slot or has a due delivery. The chosen
   * hold their slots until `sent` or `unhold`.
   */
  choose(rows: readonly { readonly id: string; readonly webhook_id: string }[], wanted: number): Choice {
    const counts = this.holding();
    const room = Math.min(wanted, this.free());
    const share = fairShare(this.concurrency, new Set([...counts.keys(), ...rows.map((r) => r.webhook_id)]).size);
    const chosen: string[] = [];
    const held: string[] = [];
    let capped = false;
    for (const row of rows) {
      const taken = counts.get(row.webhook_id) ?? 0;
      if (taken >= share) capped = true;
      if (taken >= share || chosen.length >= room) continue;
      counts.set(row.webhook_id, taken + 1);
      chosen.push(row.id);
      held.push(row.webhook_id);
      this.claiming.add(row.webhook_id);
    }
    // Writes took slots while the query ran: more may be due than there was room for.
    if (room < wanted && rows.length > chosen.length) capped = true;
    return { chosen, held, capped };
  }

  /** Gives back the slots a claim held for its chosen deliveries (once they are sent, or it failed). */
  unhold(webhookIds: readonly string[]): void {
    for (const id of webhookIds) this.claiming.remove(id);
  }

  /** A send starts: it holds a slot of its webhook until `finished`. */
  started(webhookId: string): void {
    this.sending.add(webhookId);
  }

  finished(webhookId: string): void {
    this.sending.remove(webhookId);
  }
}
