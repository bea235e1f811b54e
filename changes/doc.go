// Package changes is credo's change feed: what memory changed, scope by scope, in
// commit order, read with an opaque cursor that resumes exactly.
//
// Log is memory's Announcer: in the transaction that makes a change (a revision, a
// revert, a review item opened or resolved, an episode failed, a purge) it gives the
// change the scope's next position and writes one row naming the row that tells it,
// never its text, then tells its followers (webhooks) in the same transaction and
// notifies the readers waiting on the scope (LISTEN/NOTIFY) when it commits.
//
// # Order
//
// A sequence gives numbers in the order transactions ask for them, not the order they
// commit: a reader that has seen 11 may later find a 10 that committed after. A scope's
// position is instead taken from its change_head row, which the announcing transaction
// updates and so keeps locked until it commits: the next writer of the scope waits, and
// takes the next position only once the previous one is visible. Within a scope,
// position order is commit order, and a reader holding "position n" has seen every
// change of the scope committed before it. A cursor is such a position per scope read
// (a prefix's cursor one per scope with changes), so it resumes exactly, across restarts
// and any number of workers. Across scopes the feed is ordered by the time of each
// change; no global order is promised, nor needed to miss nothing.
package changes
