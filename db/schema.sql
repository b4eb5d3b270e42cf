-- placeholder until db.c lands
SELECT 1;
