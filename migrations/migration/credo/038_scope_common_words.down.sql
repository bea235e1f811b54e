DROP TABLE IF EXISTS scope_common_words;
