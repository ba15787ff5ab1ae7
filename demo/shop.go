package demo

import (
	"context"
	"crypto/sha256"
	"database/sql"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
)

// ShopName is the name of the shop demo collection.
const ShopName = "demo-shop"

//go:embed shop/shop.sql
var shopSQL string

//go:embed shop/tasks.jsonl
var shopTasks []byte

// shopDescriptions document the shop's columns for its tools.
var shopDescriptions = map[string]string{
	"customers.id": "the customer's number", "customers.name": "the customer's full name", "customers.email": "the customer's e-mail address (unique)",
	"customers.city": "where the customer lives", "products.sku": "the product's stock-keeping unit, its key", "products.name": "the product's name (unique)",
	"products.price": "the unit price, in euros", "products.stock": "units in stock", "orders.id": "the order's number",
	"orders.customer_id": "the customer who ordered (customers.id)", "orders.sku": "the product ordered (products.sku)",
	"orders.quantity": "units ordered", "orders.status": "open, shipped or cancelled",
}

// Shop returns the shop demo: a small SQLite shop (customers, products,
// orders) served as a REST collection whose table endpoints write —
// each session in its own world, the shared database never changed —
// with three stateful tasks (their initial states and end-state
// checks). The database is made from an embedded script into dir (the
// user's cache folder when empty), once per version of the script.
func Shop(ctx context.Context, dir string) (*toolenv.Collection, []*toolenv.Task, error) {
	path, err := shopDatabase(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("demo shop: %w", err)
	}
	db, err := rodb.Open(ctx, "shop", path, rodb.Options{InMemoryMaxBytes: -1})
	if err != nil {
		return nil, nil, fmt.Errorf("demo shop: %w", err)
	}
	schema, err := world.ReadSchema(ctx, db)
	db.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("demo shop: %w", err)
	}
	describe := func(_, table, column string) string { return shopDescriptions[table+"."+column] }
	tools := sqlrest.TableToolDefs(map[string]*world.Schema{"shop": schema}, describe)
	tools = append(tools, sqltools.WorldToolDefs([]string{"shop"}, nil)...)
	tools = append(tools,
		shopRead("find_customer_by_name", "Returns the customers (id, name, email, city) whose name is given.",
			`SELECT id, name, email, city FROM customers WHERE name = :name ORDER BY id`, "name", "string", "the customer's full name"),
		shopRead("find_product_by_name", "Returns the product (sku, name, price, stock) whose name is given.",
			`SELECT sku, name, price, stock FROM products WHERE name = :name`, "name", "string", "the product's name"),
		shopRead("list_orders_of_customer", "Returns a customer's orders (id, sku, quantity, status), by order number.",
			`SELECT id, sku, quantity, status FROM orders WHERE customer_id = :customer_id ORDER BY id`, "customer_id", "integer", "the customer's number (customers.id)"),
	)
	for _, t := range tools {
		if t.Binding != nil {
			t.Binding.Path = strings.Replace(t.Binding.Path, "/v1/bird/shop/", "/v1/shop/", 1)
		}
	}
	cfg, err := json.Marshal(sqlrest.Config{Databases: map[string]string{"shop": path}})
	if err != nil {
		return nil, nil, err
	}
	toolenv.SortTools(tools)
	c := toolenv.NewCollection(ShopName, "demo-sql", tools)
	c.Version = "v1"
	c.Description = "A small shop (customers, products, orders) in SQLite. Its REST tools read and write; every session writes in its own world (a copy of the data only it sees), so the shared database never changes. Writes outside a session are refused."
	c.Backend = toolenv.BackendSpec{Type: sqlrest.BackendType, Config: cfg}
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict}
	c.Dir = filepath.Dir(path)
	tasks, err := toolenv.ParseTasks(shopTasks, "demo/shop/tasks.jsonl")
	if err != nil {
		return nil, nil, fmt.Errorf("demo shop tasks: %w", err)
	}
	return c, tasks, nil
}

// shopRead is a read endpoint of the shop with one parameter.
func shopRead(name, desc, query, param, typ, pdesc string) *toolenv.Tool {
	in := toolenv.ObjectSchema()
	in.SetProp(param, &toolenv.Schema{Type: typ, Description: pdesc})
	in.Required = []string{param}
	in.AdditionalProperties = json.RawMessage("false")
	return &toolenv.Tool{Name: name, Description: desc + " In a session, it reads the session's world (its writes included).", Input: in,
		Binding: &toolenv.Binding{Method: "GET", Path: "/v1/shop/" + strings.TrimPrefix(name, "get_")},
		Meta:    map[string]string{sqlrest.MetaSQL: query, sqlrest.MetaDatabase: "shop", toolenv.MetaState: toolenv.StateRead}}
}

// shopDatabase makes the shop's SQLite file from its script, named by
// the script's digest, in dir (default: the user's cache folder, else
// the temporary one), unless it is there already.
func shopDatabase(dir string) (string, error) {
	if dir == "" {
		if d, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(d, "toolenv")
		} else {
			dir = os.TempDir()
		}
	}
	sum := sha256.Sum256([]byte(shopSQL))
	path := filepath.Join(dir, "demo-shop-"+hex.EncodeToString(sum[:6])+".sqlite")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "demo-shop-*.tmp")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	db, err := sql.Open("sqlite", tmp)
	if err != nil {
		return "", err
	}
	if _, err := db.Exec(shopSQL); err != nil {
		db.Close()
		return "", fmt.Errorf("make the shop database: %w", err)
	}
	if err := db.Close(); err != nil {
		return "", err
	}
	// Another process may make it at the same time: the same bytes.
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return path, nil
}
