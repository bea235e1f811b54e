ALTER TABLE webhook_delivery DROP COLUMN attempt_log;
ALTER TABLE webhook_delivery DROP COLUMN message_no;
