DROP TABLE slot_synonym;
