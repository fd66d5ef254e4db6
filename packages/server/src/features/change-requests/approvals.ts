import type { ChangeRequestState } from "@flagstaff/core";
import { type PeopleDirectory, personRankOn, RANK } from "../../access/roles.js";
import type { StoredChangeRequest, StoredReview } from "./change-request.repository.js";

// Whose approval counts, and what state reviews put a request in: the one place both are decided
// (docs/change-requests.md, "Who may approve").

/** The environment's policy as approvals read it. */
export interface ApprovalPolicy {
  readonly requiredApprovals: number;
  readonly allowSelfApproval: boolean;
  /** Only the project's admins change a protected environment: only their approvals count there. */
  readonly protected: boolean;
}

/** The person who made a request, if a person did. */
const authorId = (request: Pick<StoredChangeRequest, "author">): string | undefined =>
  request.author.type === "user" ? request.author.id : undefined;

/**
 * Why a person may not approve a request, or undefined when their approval counts: a person (never a
 * service key) with write or admin on the project now, admin for a protected environment, and not its
 * author unless the environment allows self-approval.
 */
export function approvalRefusal(
  people: PeopleDirectory,
  projectId: string,
  request: Pick<StoredChangeRequest, "author">,
  policy: ApprovalPolicy,
  userId: string,
): string | undefined {
  const rank = personRankOn(people, userId, projectId);
  if (rank === undefined || RANK[rank] < RANK.write) return "only people with write or admin on the project approve";
  if (policy.protected && rank !== "admin") return "the environment is protected: only the project's admins approve";
  if (!policy.allowSelfApproval && authorId(request) === userId)
    return "the environment does not allow authors to approve their own requests";
  return undefined;
}

/** Whether a review counts now (an approval by someone who may still approve). */
export function counts(
  people: PeopleDirectory,
  projectId: string,
  request: Pick<StoredChangeRequest, "author">,
  policy: ApprovalPolicy,
  review: StoredReview,
): boolean {
  return (
    review.decision === "approve" &&
    review.reviewer.type === "user" &&
    approvalRefusal(people, projectId, request, policy, review.reviewerId) === undefined
  );
}

/** The approvals that count now. */
export function approvalsOf(
  people: PeopleDirectory,
  projectId: string,
  request: Pick<StoredChangeRequest, "author">,
  policy: ApprovalPolicy,
  reviews: readonly StoredReview[],
): number {
  return reviews.filter((review) => counts(people, projectId, request, policy, review)).length;
}

/**
 * The state reviews put a request waiting for them in: rejected by any rejection, approved once enough
 * approvals count (scheduled when it has a time), open otherwise.
 */
export function reviewedState(
  approvals: number,
  rejected: boolean,
  policy: ApprovalPolicy,
  scheduledAt: string | null,
): ChangeRequestState {
  if (rejected) return "rejected";
  if (approvals < policy.requiredApprovals) return "open";
  return scheduledAt === null ? "approved" : "scheduled";
}

/** States a request waits in: it can still be reviewed, changed by its author, applied or cancelled. */
export const PENDING_STATES: readonly ChangeRequestState[] = ["open", "approved", "rejected", "scheduled"];
