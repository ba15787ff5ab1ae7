-- demo-shop: a small shop whose REST tools write, each session in its
-- own world (docs/worlds.md). The database is made from this script.
CREATE TABLE customers (
  id    INTEGER PRIMARY KEY,
  name  TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE,
  city  TEXT
);
CREATE TABLE products (
  sku   TEXT PRIMARY KEY,
  name  TEXT NOT NULL UNIQUE,
  price REAL NOT NULL CHECK (price >= 0),
  stock INTEGER NOT NULL DEFAULT 0 CHECK (stock >= 0)
);
CREATE TABLE orders (
  id          INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers (id),
  sku         TEXT NOT NULL REFERENCES products (sku),
  quantity    INTEGER NOT NULL CHECK (quantity > 0),
  status      TEXT NOT NULL DEFAULT 'open'
);
INSERT INTO customers VALUES
  (1, 'Ada Lovelace', 'ada@example.org', 'London'),
  (2, 'Alan Turing', 'alan@example.org', 'Manchester'),
  (3, 'Grace Hopper', 'grace@example.org', 'New York'),
  (4, 'Katherine Johnson', 'katherine@example.org', 'Hampton'),
  (5, 'Émilie du Châtelet', 'emilie@example.org', 'Paris');
INSERT INTO products VALUES
  ('TEA-GRN', 'Green tea', 4.5, 12),
  ('TEA-BLK', 'Black tea', 4.0, 30),
  ('CUP-01', 'Mug', 8.0, 7),
  ('PEN-07', 'Fountain pen', 21.5, 3),
  ('NB-A5', 'Notebook', 6.25, 40),
  ('LMP-2', 'Desk lamp', 35.0, 0);
INSERT INTO orders VALUES
  (1, 1, 'NB-A5', 2, 'shipped'),
  (2, 2, 'TEA-BLK', 1, 'shipped'),
  (3, 3, 'PEN-07', 1, 'open'),
  (4, 3, 'CUP-01', 2, 'shipped'),
  (5, 4, 'NB-A5', 5, 'open'),
  (6, 5, 'TEA-GRN', 3, 'open'),
  (7, 2, 'CUP-01', 1, 'cancelled');
