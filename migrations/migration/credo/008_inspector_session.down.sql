DROP TABLE IF EXISTS inspector_session;
