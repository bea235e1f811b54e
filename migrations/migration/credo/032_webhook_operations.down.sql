ALTER TABLE webhook DROP COLUMN message_seq;
ALTER TABLE webhook DROP COLUMN retired_secrets;
