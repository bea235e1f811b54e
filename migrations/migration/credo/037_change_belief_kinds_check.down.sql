ALTER TABLE change DROP CONSTRAINT change_kind_check;
