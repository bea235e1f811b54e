// Package memory is credo's belief store and its one revision engine, Store.Apply.
//
// Extraction, consolidation and operators write through Apply: one transaction per
// batch under the scope's advisory lock. Every applied revision writes a revision_event;
// every refused one a belief_conflict of kind refused, an item of the review queue.
// apply.go holds the decisions, rules.go and chain.go the rules that need no database,
// apply_read.go and apply_write.go the statements.
//
// # Decision table
//
// A fact under the confidence floor is rejected and nothing is stored, whatever it
// says. Otherwise the first row that matches decides; target is the candidate a
// directive names, refusals are in brackets by Cause:
//
//	action     reason      target                          writer's origin      outcome
//	---------  ----------  ------------------------------  -------------------  -------------------------------
//	(none)     -           no active belief says it        any                  accepted
//	(none)     -           an active belief says it        any                  duplicate: it is restated
//	any        any         index not among the candidates  any                  refused [invalid_index]
//	any        any         revised earlier in the batch    any                  refused [stale_target]
//	reinforce  restated    not active                      any                  refused [stale_target]
//	reinforce  restated    active                          any                  restated
//	retract    any         not active                      any                  refused [stale_target]
//	retract    any         entrenched (below)              not operator         refused [entrenchment]
//	retract    correction  active                          any                  retracted: it ends where it began
//	retract    temporal    active, starts after the fact   any                  refused [time_order]
//	retract    temporal    active                          any                  retracted at the fact's time
//	supersede  any         its chain's head not active     any                  refused [stale_target]
//	supersede  temporal    head is an event                not operator         stored beside it, refused [event]
//	supersede  any         head starts after the fact      any                  backfilled: stored as history
//	supersede  any         head says the same              any                  restated
//	supersede  any         head entrenched                 not operator         refused [entrenchment]
//	supersede  any         head active                     any                  superseded
//
// A supersede follows the target's chain to its head: a target another writer
// superseded since it was shown is revised through the belief that replaced it. A
// correction that gives no date holds from when its target began (the target was never
// true); a retraction's statement, if any, is stored as a new belief.
//
// Entrenched: an authoritative belief, for any writer but an operator; a belief the user
// stated, for an inference, an imported belief or a statement of lower confidence. An
// imported belief (origin imported: another memory system's) is entrenched against
// nothing. Only an operator asserts authoritative beliefs. Only consolidation and operators send resolutions, decided the
// same way (first match):
//
//	resolution               target or replacement                   outcome
//	-----------------------  --------------------------------------  -------------------------------
//	any                      index not among the candidates          refused [invalid_index]
//	any                      target not active, or revised already   refused [stale_target]
//	retract                  target entrenched against an inference  refused [entrenchment]
//	retract                  target active                           retracted (correction: ends where it began)
//	supersede by replacement replacement not active                  refused [stale_target]
//	supersede, temporal      target is an event (not operator)       refused [event]
//	supersede                target entrenched against replacement   refused [entrenchment]
//	supersede, not duplicate replacement starts before the target    refused [time_order]
//	supersede                otherwise                               superseded
//
// A restatement reinforces its belief; dated before the belief starts, the belief starts
// then and takes the earlier provenance, unless a belief that held before it started at
// or after that date: the value came back, and the statement is stored as history.
//
// # Flagged for review
//
// Retiring a belief (superseded, retracted) flags the active beliefs concluded from it
// (Fact.DependsOn) and opens a basis_changed item for each; consolidation asks the model
// whether they still hold, and Batch.Keep closes the item as kept.
package memory
