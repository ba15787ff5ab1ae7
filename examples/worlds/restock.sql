-- The initial state of the restock task: green tea sold out.
UPDATE products SET stock = 0 WHERE sku = 'TEA-GRN';
