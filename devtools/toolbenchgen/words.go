package toolbenchgen

// Words written for this package: the nouns, verbs and qualifiers API
// documentation is made of.
var (
	nouns = []string{
		"account", "address", "airport", "album", "alert", "analysis", "answer", "article", "artist", "asset",
		"author", "balance", "bank", "barcode", "book", "brand", "brewery", "business", "calendar", "camera",
		"campaign", "card", "category", "channel", "chart", "city", "coin", "comment", "company", "concert",
		"contact", "country", "coupon", "course", "crypto", "currency", "customer", "dataset", "date", "deal",
		"device", "domain", "email", "episode", "event", "exchange", "feed", "file", "flight", "forecast",
		"game", "genre", "hashtag", "history", "hotel", "image", "index", "invoice", "item", "job",
		"keyword", "language", "league", "list", "listing", "location", "lyrics", "map", "market", "match",
		"media", "message", "metric", "model", "movie", "name", "network", "news", "number", "offer",
		"order", "page", "payment", "phone", "photo", "place", "player", "playlist", "podcast", "post",
		"price", "product", "profile", "quote", "rate", "recipe", "region", "report", "restaurant", "result",
		"review", "route", "schedule", "score", "season", "series", "session", "shipment", "show", "site",
		"song", "station", "statistics", "status", "stock", "store", "stream", "summary", "team", "text",
		"ticket", "time", "token", "tournament", "track", "trend", "user", "value", "vehicle", "venue",
		"video", "weather", "website", "word", "zone",
	}
	verbs = []string{
		"get", "list", "search", "fetch", "find", "check", "create", "update", "delete", "convert",
		"translate", "validate", "lookup", "retrieve", "generate", "calculate", "detect", "track", "verify", "download",
	}
	qualifiers = []string{
		"latest", "all", "top", "daily", "live", "random", "popular", "recent", "current", "historical",
		"detailed", "basic", "public", "trending", "upcoming", "nearby", "global", "local", "free", "official",
	}
	brands = []string{
		"Api", "Hub", "Pro", "Data", "Finder", "Scout", "Lab", "Cloud", "Box", "Genie",
		"Wise", "Smart", "Fast", "Open", "Mega", "Quick", "Zen", "Nova", "Pulse", "Atlas",
	}
	jsonKeys = []string{"id", "url", "data", "name", "code", "text", "type", "info", "error", "status", "result", "message", "title", "time", "msg", "key"}
	fillers  = []string{
		"the", "a", "for", "of", "by", "with", "from", "in", "on", "and", "or", "to", "this", "each", "its", "any",
		"returns", "gives", "provides", "use", "using", "given", "specific", "information", "about", "details",
		"endpoint", "request", "response", "parameter", "optional", "required", "default", "example", "format",
		"json", "id", "query", "string", "field", "maximum", "minimum", "filter", "sort", "limit", "offset",
	}
)

// commonParam is a parameter name many APIs use, with the type and
// examples it comes with (written for this package).
type commonParam struct {
	name     string
	typ      string
	examples []string
}

// commonParams are the common parameter names, most frequent first;
// they are drawn with weights 1/rank.
var commonParams = []commonParam{
	{"id", "STRING", []string{"", "1", "42"}},
	{"page", "NUMBER", []string{"1", "", "2"}},
	{"limit", "NUMBER", []string{"10", "20", ""}},
	{"url", "STRING", []string{"https://example.com", ""}},
	{"symbol", "STRING", []string{"AAPL", "BTC", ""}},
	{"type", "STRING", []string{"", "all"}},
	{"format", "STRING", []string{"json", ""}},
	{"q", "STRING", []string{"", "music"}},
	{"name", "STRING", []string{"", "John"}},
	{"count", "NUMBER", []string{"10", ""}},
	{"offset", "NUMBER", []string{"0", ""}},
	{"cursor", "STRING", []string{""}},
	{"keyword", "STRING", []string{"", "shoes"}},
	{"year", "NUMBER", []string{"2023", "2022", ""}},
	{"from", "STRING", []string{"USD", "en", ""}},
	{"lat", "NUMBER", []string{"40.7128", ""}},
	{"phone", "STRING", []string{""}},
	{"username", "STRING", []string{"", "nasa"}},
	{"domain", "STRING", []string{"example.com", ""}},
	{"to", "STRING", []string{"EUR", "fr", ""}},
	{"text", "STRING", []string{"", "Hello world"}},
	{"lang", "STRING", []string{"en", ""}},
	{"size", "NUMBER", []string{"10", ""}},
	{"country", "STRING", []string{"US", ""}},
	{"category", "STRING", []string{""}},
	{"sort", "STRING", []string{"asc", ""}},
	{"language", "STRING", []string{"en", ""}},
	{"query", "STRING", []string{""}},
	{"location", "STRING", []string{"London", ""}},
	{"lon", "NUMBER", []string{"-74.0060", ""}},
	{"per_page", "NUMBER", []string{"10", ""}},
	{"skip", "NUMBER", []string{"0", ""}},
	{"city", "STRING", []string{"Paris", ""}},
	{"sortBy", "STRING", []string{""}},
	{"email", "STRING", []string{""}},
	{"date", "DATE (YYYY-MM-DD)", []string{"2023-01-01", ""}},
	{"currency", "STRING", []string{"USD", ""}},
	{"user_id", "STRING", []string{""}},
	{"order", "STRING", []string{"desc", ""}},
	{"status", "STRING", []string{""}},
}
