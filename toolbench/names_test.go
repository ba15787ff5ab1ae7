package toolbench

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNames(t *testing.T) {
	tests := []struct{ fn, in, want string }{
		{"std", "TheClique", "theclique"},
		{"std", "Songkick concert", "songkick_concert"},
		{"std", "  --Hello,  World!!__", "hello_world"},
		{"std", "168predict VIP Football", "get_168predict_vip_football"},
		{"std", "Currency Converter_v2", "currency_converter_v2"},
		{"std", "中文 API", "中文_api"},
		{"std", "Ünïcode", "n_code"},
		{"std", "", ""},
		{"std", "a^b c", "a^b_c"},
		{"std", "___", ""},
		{"api", "id", "is_id"},
		{"api", "From", "is_from"},
		{"api", "ids", "ids"},
		{"cat", "Business Software", "Business_Software"},
		{"cat", "Finance, Data/Other", "Finance_Data_Other"},
	}
	for _, tt := range tests {
		var got string
		switch tt.fn {
		case "std":
			got = Standardize(tt.in)
		case "api":
			got = APIName(tt.in)
		case "cat":
			got = StandardizeCategory(tt.in)
		}
		if got != tt.want {
			t.Errorf("%s(%q) = %q, want %q", tt.fn, tt.in, got, tt.want)
		}
	}
	if got := FunctionName("Songkick concert", "TheClique"); got != "songkick_concert_for_theclique" {
		t.Errorf("FunctionName = %q", got)
	}
	long := FunctionName("Yesterday Sure VIP BTTS/Goal Goal", "168predict VIP Football Predictions")
	if len(long) != 64 || long != "sure_vip_btts_goal_goal_for_get_168predict_vip_football_predictions"[len("sure_vip_btts_goal_goal_for_get_168predict_vip_football_predictions")-64:] {
		t.Errorf("long FunctionName = %q (%d)", long, len(long))
	}
}

func FuzzStandardize(f *testing.F) {
	for _, s := range []string{"TheClique", "a  b", "9lives", "中文", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Standardize(s)
		if isStandard(s) && out != s {
			t.Fatalf("isStandard(%q) but Standardize gives %q", s, out)
		}
		if Standardize(out) != out && !(len(out) > 0 && out[0] >= '0' && out[0] <= '9') {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, Standardize(out))
		}
		for _, r := range out {
			if !((r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' || r == '^' || (r >= 0x4e00 && r <= 0x9fa5)) {
				t.Fatalf("Standardize(%q) = %q keeps %q", s, out, r)
			}
		}
	})
}

// TestFunctionNameCountsCharacters checks that function names keep their
// last 64 characters, as ToolBench's Python slice name[-64:] does, not
// their last 64 bytes (which cut CJK names short, mid-character).
func TestFunctionNameCountsCharacters(t *testing.T) {
	tests := []struct{ api, tool, want string }{
		{"天气预报", "中文工具", "天气预报_for_中文工具"},
		{strings.Repeat("天气", 20), "中文工具", strings.Repeat("天气", 20) + "_for_中文工具"},                         // 49 characters, 137 bytes
		{strings.Repeat("天气", 40), "中文工具", string([]rune(strings.Repeat("天气", 40) + "_for_中文工具")[89-64:])}, // 89 characters
	}
	for _, tt := range tests {
		got := FunctionName(tt.api, tt.tool)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("FunctionName(%q, %q) = %q, want %q", tt.api, tt.tool, got, tt.want)
		}
		rec := &CacheRecord{Tool: Standardize(tt.tool), API: APIName(tt.api)}
		if got := rec.FunctionName(); got != tt.want {
			t.Errorf("CacheRecord.FunctionName = %q, want %q", got, tt.want)
		}
	}
}
