-- Every node of the cluster, coordinator and workers, gets pgvector in credo's database.
CREATE EXTENSION IF NOT EXISTS vector;
