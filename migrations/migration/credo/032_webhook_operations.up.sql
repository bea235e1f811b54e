-- Webhooks an operator can run (docs/api.md, "Changes and webhooks").
--
-- retired_secrets: the secrets rotated out before the previous one, each still signing
-- until its day is over ([{"secret": base64 of the sealed key, "until": time}]), so that a
-- second rotation within a day does not cut off the first secret at once.
-- message_seq: the last message number given to the webhook's deliveries; message ids
-- count per webhook, so that a receiver learns nothing of other webhooks' traffic.
ALTER TABLE webhook ADD COLUMN retired_secrets jsonb NOT NULL DEFAULT '[]';
ALTER TABLE webhook ADD COLUMN message_seq bigint NOT NULL DEFAULT 0;
