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
//
// # Positions never go back
//
// A whole-scope purge leaves no row naming the scope, its head included, so the head
// cannot remember where the scope's positions were. A position is therefore the
// database's clock in microseconds when the change is written, or the head's next when
// that is later (many changes within a microsecond): after a purge, and an import of
// the same scope name (unannounced), the next change's position is the clock's, past
// every position given before, and a cursor held across them reads it. A sequence
// would do as well, but would tell each tenant how many changes every other made; the
// clock tells what each change's timestamp already does. The clock is the
// coordinator's on Citus (it evaluates the statement's functions before routing it), so
// every scope's positions come from one clock; a clock set back by more than the time
// between a purge and the scope's next change would break the promise. Positions stay
// below 2^53, exact in JSON and JavaScript, until the year 2255.
//
// For the same reason a cursor naming a position that the feed never gave (past the
// scope's last, or, for a scope without changes, past the clock) is refused: a cursor of
// another database, or a forged one, would otherwise read nothing, silently.
package changes
