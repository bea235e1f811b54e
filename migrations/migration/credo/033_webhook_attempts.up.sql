-- message_no: the delivery's number among its webhook's messages (webhook-id msg_<n>),
-- given at its first attempt; null before it (and for deliveries numbered by id before
-- this migration, which keep msg_<id>).
-- attempt_log: each attempt of the delivery, oldest first ([{"at", "status", "error"}]):
-- the operator's log of attempts (beliefs webhooks log). No body, no secret.
ALTER TABLE webhook_delivery ADD COLUMN message_no bigint;
ALTER TABLE webhook_delivery ADD COLUMN attempt_log jsonb NOT NULL DEFAULT '[]';
