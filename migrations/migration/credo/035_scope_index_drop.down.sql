DROP TABLE IF EXISTS scope_index_drop;
