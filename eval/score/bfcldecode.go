package score

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// BFCL's result files hold each model's raw output ("result"), which
// BFCL's evaluation decodes with the model's handler before it checks
// anything. The leaderboard's handlers come in two families:
//
//   - prompting models (a name without "-FC"): the output is text, a
//     Python list of calls, decoded by default_decode_ast_prompting
//     (bfcl/model_handler/utils.py): "`", newlines and spaces stripped at
//     both ends, "[" and "]" added where missing, then Python's
//     ast.parse and resolve_ast_call / resolve_ast_by_type;
//   - function-calling models (a name ending in "-FC"): the output is the
//     list of calls the API returned, one {name: arguments} per call, the
//     arguments a JSON text (OpenAI's handler json.loads it) or already an
//     object (Gemini's, Claude's); for OpenAI, Mistral and Google models
//     the leaderboard sent "." in function names as "_" (underscore_to_dot),
//     and its checker expects them so.
//
// What the decoder cannot read is BFCL's "ast_decoder:decoder_failed";
// what it reads but is not a list of calls is "decoder_wrong_output_format"
// (the checker's own rule).

// BFCL output formats: how a result file's "result" is decoded.
const (
	// BFCLFormatDecoded: the record's "model_output" is already decoded
	// (the fixtures' format); nothing to decode.
	BFCLFormatDecoded = "decoded"
	// BFCLFormatPython: prompting models' Python-call text.
	BFCLFormatPython = "python"
	// BFCLFormatFC: function-calling models' list of {name: arguments}.
	BFCLFormatFC = "fc"
)

// BFCLModelFamily says how BFCL's handlers decode a model's outputs, from
// the model's name as the leaderboard writes it (a result folder's name,
// "/" written "_"): the format, and whether function names were sent with
// "." written "_". Function-calling models are the ones whose name ends
// in "-FC"; of those, OpenAI's (gpt-, o1, o3, o4), Mistral's (mistral-,
// open-mistral, open-mixtral, codestral, ministral) and Google's (gemini-)
// use underscore names.
func BFCLModelFamily(model string) (format string, underscore bool) {
	if !strings.HasSuffix(model, "-FC") {
		return BFCLFormatPython, false
	}
	m := strings.ToLower(model)
	for _, p := range []string{"gpt-", "o1-", "o1_", "o3-", "o4-", "mistral-", "open-mistral", "open-mixtral", "codestral", "ministral", "gemini-"} {
		if strings.HasPrefix(m, p) {
			return BFCLFormatFC, true
		}
	}
	return BFCLFormatFC, false
}

// BFCLDecodeError is an output BFCL's decoder fails on: the checker's
// verdict is ast_decoder:decoder_failed.
type BFCLDecodeError struct{ Msg string }

// Error says why the output could not be decoded.
func (e *BFCLDecodeError) Error() string { return "bfcl decoder: " + e.Msg }

// BFCLUnsupportedError is an output toolenv cannot decode as BFCL would:
// a Python expression BFCL evaluates (arithmetic on names, sets, f-string
// parts, bytes) whose value toolenv does not reproduce. The case is
// reported as not scored, with this reason, never given a verdict.
type BFCLUnsupportedError struct{ Msg string }

// Error says what is not reproduced.
func (e *BFCLUnsupportedError) Error() string { return "not reproduced: " + e.Msg }

// DecodeBFCL decodes one result file's "result" as BFCL's handlers of the
// format do. A *BFCLDecodeError means BFCL's decoder fails too (the
// verdict is decoder_failed); a *BFCLUnsupportedError means toolenv
// cannot tell what BFCL would make of it.
func DecodeBFCL(result any, format string) (any, error) {
	switch format {
	case BFCLFormatPython:
		s, ok := result.(string)
		if !ok {
			return nil, &BFCLDecodeError{Msg: fmt.Sprintf("a prompting model's result must be text, not %s", jsonKind(result))}
		}
		return decodePromptingBFCL(s)
	case BFCLFormatFC:
		list, ok := result.([]any)
		if !ok {
			return result, nil
		}
		out := make([]any, len(list))
		for i, it := range list {
			d, ok := it.(pyfmt.Dict)
			if !ok || len(d) == 0 {
				out[i] = it
				continue
			}
			name := d[0].Key
			args := d[0].Value
			if s, ok := args.(string); ok {
				v, err := pyfmt.Loads(s)
				if err != nil {
					return nil, &BFCLDecodeError{Msg: fmt.Sprintf("call %d (%s): the arguments are not JSON: %v", i+1, name, err)}
				}
				args = v
			}
			out[i] = pyfmt.Dict{{Key: name, Value: args}}
		}
		return out, nil
	}
	return nil, fmt.Errorf("bfcl: unknown output format %q (python or fc)", format)
}

// decodePromptingBFCL is default_decode_ast_prompting for Python.
func decodePromptingBFCL(result string) (any, error) {
	s := strings.Trim(result, "`\n ")
	if !strings.HasPrefix(s, "[") {
		s = "[" + s
	}
	if !strings.HasSuffix(s, "]") {
		s += "]"
	}
	s = strings.Trim(strings.TrimSpace(s), "'")
	p := &pyParser{s: s}
	e, err := p.parse()
	if err != nil {
		return nil, err
	}
	var calls []*pyNode
	switch e.kind {
	case nodeCall:
		calls = []*pyNode{e}
	case nodeList, nodeTuple, nodeSet:
		for _, el := range e.elts {
			if el.kind != nodeCall {
				return nil, &BFCLDecodeError{Msg: "AssertionError: an item of the list is not a call"}
			}
			calls = append(calls, el)
		}
	default:
		return nil, &BFCLDecodeError{Msg: fmt.Sprintf("AttributeError: '%s' object has no attribute 'elts'", e.kind)}
	}
	out := make([]any, 0, len(calls))
	for _, c := range calls {
		v, err := resolveCall(c)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// resolveCall is resolve_ast_call: {dotted name: {keyword: value}}, the
// positional arguments ignored.
func resolveCall(c *pyNode) (any, error) {
	args := pyfmt.Dict{}
	for _, kw := range c.keywords {
		if kw.name == "" {
			return nil, &BFCLUnsupportedError{Msg: "a **mapping argument"}
		}
		v, err := resolveValue(kw.value)
		if err != nil {
			return nil, err
		}
		args = append(args, pyfmt.Item{Key: kw.name, Value: v})
	}
	return pyfmt.Dict{{Key: c.funcName(), Value: args}}, nil
}

// resolveValue is resolve_ast_by_type.
func resolveValue(n *pyNode) (any, error) {
	switch n.kind {
	case nodeConst:
		return n.value, nil
	case nodeUnary:
		// -value.operand.value, whatever the operator.
		if n.operand.kind != nodeConst {
			return nil, &BFCLDecodeError{Msg: fmt.Sprintf("AttributeError: '%s' object has no attribute 'value'", n.operand.kind)}
		}
		return pyNegate(n.operand.value)
	case nodeList, nodeTuple:
		out := make([]any, len(n.elts))
		for i, e := range n.elts {
			v, err := resolveValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		if n.kind == nodeTuple {
			return pyfmt.Tuple(out), nil
		}
		return out, nil
	case nodeDict:
		d := pyfmt.Dict{}
		for i, k := range n.keys {
			if k == nil {
				return nil, &BFCLDecodeError{Msg: "Exception: Unsupported AST type: <class 'NoneType'>"}
			}
			kv, err := resolveValue(k)
			if err != nil {
				return nil, err
			}
			ks, ok := kv.(string)
			if !ok {
				return nil, &BFCLUnsupportedError{Msg: "a dict key that is not a string"}
			}
			v, err := resolveValue(n.elts[i])
			if err != nil {
				return nil, err
			}
			d.Set(ks, v)
		}
		return d, nil
	case nodeName:
		return n.name, nil
	case nodeCall:
		if len(n.keywords) == 0 {
			return unparse(n)
		}
		return resolveCall(n)
	case nodeBinOp:
		return evalBinOp(n)
	case nodeSubscript:
		return unparse(n)
	case nodeEllipsis:
		return "...", nil
	}
	return nil, &BFCLDecodeError{Msg: fmt.Sprintf("Exception: Unsupported AST type: %s", n.kind)}
}

// pyNegate is -x of a constant.
func pyNegate(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		i, ok := new(big.Int).SetString(string(x), 10)
		if !ok {
			return nil, &BFCLUnsupportedError{Msg: "an integer literal " + string(x)}
		}
		return json.Number(i.Neg(i).String()), nil
	case float64:
		return -x, nil
	case bool:
		if x {
			return json.Number("-1"), nil
		}
		return json.Number("0"), nil
	case nil:
		return nil, &BFCLDecodeError{Msg: "TypeError: bad operand type for unary -: 'NoneType'"}
	case string:
		return nil, &BFCLDecodeError{Msg: "TypeError: bad operand type for unary -: 'str'"}
	}
	return nil, &BFCLUnsupportedError{Msg: "a unary operator on " + fmt.Sprintf("%T", v)}
}

// evalBinOp is eval(ast.unparse(value)) for arithmetic on numbers and
// string concatenation and repetition; anything else is not reproduced.
func evalBinOp(n *pyNode) (any, error) {
	val := func(m *pyNode) (any, error) {
		switch m.kind {
		case nodeConst:
			return m.value, nil
		case nodeUnary:
			if m.op == "-" || m.op == "+" {
				x, err := val2(m.operand)
				if err != nil {
					return nil, err
				}
				if m.op == "+" {
					return x, nil
				}
				return pyNegate(x)
			}
		case nodeBinOp:
			return evalBinOp(m)
		case nodeName:
			return nil, &BFCLDecodeError{Msg: fmt.Sprintf("NameError: name '%s' is not defined", m.name)}
		}
		return nil, &BFCLUnsupportedError{Msg: "an operation on " + string(m.kind)}
	}
	a, err := val(n.left)
	if err != nil {
		return nil, err
	}
	b, err := val(n.right)
	if err != nil {
		return nil, err
	}
	if as, ok := a.(string); ok {
		if bs, ok := b.(string); ok && n.op == "+" {
			return as + bs, nil
		}
		return nil, &BFCLUnsupportedError{Msg: "an operation on strings other than +"}
	}
	ai, aInt := pyInt(a)
	bi, bInt := pyInt(b)
	if aInt && bInt {
		switch n.op {
		case "+":
			return json.Number(new(big.Int).Add(ai, bi).String()), nil
		case "-":
			return json.Number(new(big.Int).Sub(ai, bi).String()), nil
		case "*":
			return json.Number(new(big.Int).Mul(ai, bi).String()), nil
		case "**":
			if bi.Sign() >= 0 && bi.IsInt64() && bi.Int64() <= 4096 {
				return json.Number(new(big.Int).Exp(ai, bi, nil).String()), nil
			}
		}
	}
	af, aok := pyFloat(a)
	bf, bok := pyFloat(b)
	if !aok || !bok {
		return nil, &BFCLUnsupportedError{Msg: "an operation on values that are not numbers"}
	}
	switch n.op {
	case "+":
		return af + bf, nil
	case "-":
		return af - bf, nil
	case "*":
		return af * bf, nil
	case "/":
		if bf == 0 {
			return nil, &BFCLDecodeError{Msg: "ZeroDivisionError: division by zero"}
		}
		return af / bf, nil
	case "**":
		return math.Pow(af, bf), nil
	}
	return nil, &BFCLUnsupportedError{Msg: "the operator " + n.op}
}

func val2(m *pyNode) (any, error) {
	if m.kind == nodeConst {
		return m.value, nil
	}
	if m.kind == nodeBinOp {
		return evalBinOp(m)
	}
	return nil, &BFCLUnsupportedError{Msg: "an operation on " + string(m.kind)}
}

func pyInt(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case json.Number:
		i, ok := new(big.Int).SetString(string(x), 10)
		return i, ok
	case bool:
		if x {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	}
	return nil, false
}

func pyFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// unparse is ast.unparse of a call without keywords or a subscript, for
// the values Python prints the same way; anything else is not
// reproduced.
func unparse(n *pyNode) (string, error) {
	switch n.kind {
	case nodeConst:
		switch x := n.value.(type) {
		case nil, bool, string, json.Number:
			return pyfmt.Repr(x), nil
		case float64:
			return pyfmt.Repr(x), nil
		}
	case nodeName:
		return n.name, nil
	case nodeAttribute:
		base, err := unparse(n.operand)
		if err != nil {
			return "", err
		}
		return base + "." + n.name, nil
	case nodeList, nodeTuple:
		parts := make([]string, len(n.elts))
		for i, e := range n.elts {
			s, err := unparse(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		if n.kind == nodeList {
			return "[" + strings.Join(parts, ", ") + "]", nil
		}
		if len(parts) == 1 {
			return "(" + parts[0] + ",)", nil
		}
		return "(" + strings.Join(parts, ", ") + ")", nil
	case nodeUnary:
		s, err := unparse(n.operand)
		if err != nil {
			return "", err
		}
		return n.op + s, nil
	case nodeCall:
		f, err := unparse(n.fn)
		if err != nil {
			return "", err
		}
		parts := make([]string, 0, len(n.elts)+len(n.keywords))
		for _, e := range n.elts {
			s, err := unparse(e)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		for _, kw := range n.keywords {
			s, err := unparse(kw.value)
			if err != nil {
				return "", err
			}
			parts = append(parts, kw.name+"="+s)
		}
		return f + "(" + strings.Join(parts, ", ") + ")", nil
	case nodeSubscript:
		base, err := unparse(n.operand)
		if err != nil {
			return "", err
		}
		idx, err := unparse(n.elts[0])
		if err != nil {
			return "", err
		}
		return base + "[" + idx + "]", nil
	}
	return "", &BFCLUnsupportedError{Msg: "ast.unparse of " + string(n.kind)}
}

// The Python expression subset BFCL's outputs are written in.

type nodeKind string

const (
	nodeConst     nodeKind = "Constant"
	nodeName      nodeKind = "Name"
	nodeAttribute nodeKind = "Attribute"
	nodeCall      nodeKind = "Call"
	nodeList      nodeKind = "List"
	nodeTuple     nodeKind = "Tuple"
	nodeSet       nodeKind = "Set"
	nodeDict      nodeKind = "Dict"
	nodeUnary     nodeKind = "UnaryOp"
	nodeBinOp     nodeKind = "BinOp"
	nodeSubscript nodeKind = "Subscript"
	nodeEllipsis  nodeKind = "Ellipsis"
	nodeOther     nodeKind = "expr"
)

type pyKeyword struct {
	name  string
	value *pyNode
}

type pyNode struct {
	kind  nodeKind
	value any       // Constant
	name  string    // Name, Attribute's attribute
	op    string    // UnaryOp, BinOp
	elts  []*pyNode // List/Tuple/Set items, Dict values, Call positionals, Subscript index
	keys  []*pyNode // Dict keys
	// operand is a UnaryOp's operand, an Attribute's or Subscript's value.
	operand     *pyNode
	left, right *pyNode
	fn          *pyNode
	keywords    []pyKeyword
}

// funcName is resolve_ast_call's dotted name of a call's function.
func (n *pyNode) funcName() string {
	var parts []string
	f := n.fn
	for f.kind == nodeAttribute {
		parts = append(parts, f.name)
		f = f.operand
	}
	if f.kind == nodeName {
		parts = append(parts, f.name)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".")
}

type pyParser struct {
	s   string
	pos int
}

func (p *pyParser) syntax(format string, args ...any) error {
	line := 1 + strings.Count(p.s[:min(p.pos, len(p.s))], "\n")
	return &BFCLDecodeError{Msg: fmt.Sprintf("invalid syntax (<unknown>, line %d): %s", line, fmt.Sprintf(format, args...))}
}

func (p *pyParser) parse() (*pyNode, error) {
	n, err := p.expr()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.s) {
		return nil, p.syntax("unexpected %q", p.s[p.pos:min(p.pos+20, len(p.s))])
	}
	return n, nil
}

// space skips spaces, tabs, newlines (the whole text is inside brackets)
// and comments.
func (p *pyParser) space() {
	for p.pos < len(p.s) {
		switch c := p.s[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			p.pos++
		case c == '\\' && p.pos+1 < len(p.s) && p.s[p.pos+1] == '\n':
			p.pos += 2
		case c == '#':
			for p.pos < len(p.s) && p.s[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func (p *pyParser) peek(tok string) bool {
	p.space()
	return strings.HasPrefix(p.s[p.pos:], tok)
}

func (p *pyParser) eat(tok string) bool {
	if p.peek(tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

// expr parses an expression; conditional, boolean and comparison
// expressions, lambdas and the like are read as "expr" nodes BFCL does
// not resolve.
func (p *pyParser) expr() (*pyNode, error) {
	p.space()
	if p.keyword("lambda") {
		return nil, &BFCLDecodeError{Msg: "TypeError: 'Lambda' has no body list (resolve_ast_by_type)"}
	}
	n, err := p.arith()
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		matched := false
		for _, op := range []string{"==", "!=", "<=", ">=", "<", ">"} {
			if p.eat(op) {
				if _, err := p.arith(); err != nil {
					return nil, err
				}
				n = &pyNode{kind: nodeOther}
				matched = true
				break
			}
		}
		if !matched {
			for _, kw := range []string{"and", "or", "in", "is", "if", "else", "not"} {
				if p.keyword(kw) {
					if _, err := p.arith(); err != nil {
						return nil, err
					}
					n = &pyNode{kind: nodeOther}
					matched = true
					break
				}
			}
		}
		if !matched {
			return n, nil
		}
	}
}

// keyword consumes the word w when it stands alone.
func (p *pyParser) keyword(w string) bool {
	p.space()
	if !strings.HasPrefix(p.s[p.pos:], w) {
		return false
	}
	end := p.pos + len(w)
	if end < len(p.s) && isIdentByte(p.s[end]) {
		return false
	}
	p.pos = end
	return true
}

func (p *pyParser) arith() (*pyNode, error) { return p.binary(0) }

var binLevels = [][]string{{"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "//", "/", "%", "@"}}

func (p *pyParser) binary(level int) (*pyNode, error) {
	if level == len(binLevels) {
		return p.unary()
	}
	left, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		op := ""
		for _, o := range binLevels[level] {
			if strings.HasPrefix(p.s[p.pos:], o) && !strings.HasPrefix(p.s[p.pos:], o+"=") && !(o == "*" && strings.HasPrefix(p.s[p.pos:], "**")) {
				op = o
				break
			}
		}
		if op == "" {
			return left, nil
		}
		p.pos += len(op)
		right, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		left = &pyNode{kind: nodeBinOp, op: op, left: left, right: right}
	}
}

func (p *pyParser) unary() (*pyNode, error) {
	p.space()
	for _, op := range []string{"-", "+", "~"} {
		if strings.HasPrefix(p.s[p.pos:], op) {
			p.pos++
			operand, err := p.unary()
			if err != nil {
				return nil, err
			}
			return &pyNode{kind: nodeUnary, op: op, operand: operand}, nil
		}
	}
	if p.keyword("not") {
		operand, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &pyNode{kind: nodeUnary, op: "not", operand: operand}, nil
	}
	return p.power()
}

func (p *pyParser) power() (*pyNode, error) {
	base, err := p.postfix()
	if err != nil {
		return nil, err
	}
	if p.eat("**") {
		exp, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &pyNode{kind: nodeBinOp, op: "**", left: base, right: exp}, nil
	}
	return base, nil
}

func (p *pyParser) postfix() (*pyNode, error) {
	n, err := p.atom()
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		switch {
		case p.eat("("):
			call := &pyNode{kind: nodeCall, fn: n}
			seen := map[string]bool{}
			for !p.eat(")") {
				if p.pos >= len(p.s) {
					return nil, p.syntax("'(' was never closed")
				}
				if p.eat("**") {
					v, err := p.expr()
					if err != nil {
						return nil, err
					}
					call.keywords = append(call.keywords, pyKeyword{value: v})
				} else if p.eat("*") {
					v, err := p.expr()
					if err != nil {
						return nil, err
					}
					call.elts = append(call.elts, v)
				} else {
					save := p.pos
					name := p.ident()
					if name != "" && p.peek("=") && !p.peek("==") {
						p.eat("=")
						if seen[name] {
							return nil, p.syntax("keyword argument repeated: %s", name)
						}
						seen[name] = true
						v, err := p.expr()
						if err != nil {
							return nil, err
						}
						call.keywords = append(call.keywords, pyKeyword{name: name, value: v})
					} else {
						p.pos = save
						if len(call.keywords) > 0 {
							return nil, p.syntax("positional argument follows keyword argument")
						}
						v, err := p.expr()
						if err != nil {
							return nil, err
						}
						call.elts = append(call.elts, v)
					}
				}
				if !p.eat(",") && !p.peek(")") {
					return nil, p.syntax("expected ',' or ')'")
				}
			}
			n = call
		case p.eat("["):
			idx, err := p.expr()
			if err != nil {
				return nil, err
			}
			if !p.eat("]") {
				return nil, p.syntax("expected ']'")
			}
			n = &pyNode{kind: nodeSubscript, operand: n, elts: []*pyNode{idx}}
		case p.peek(".") && !p.peek("..."):
			p.eat(".")
			p.space()
			name := p.ident()
			if name == "" {
				return nil, p.syntax("expected a name after '.'")
			}
			n = &pyNode{kind: nodeAttribute, operand: n, name: name}
		default:
			return n, nil
		}
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func (p *pyParser) ident() string {
	p.space()
	start := p.pos
	if p.pos < len(p.s) && (p.s[p.pos] >= '0' && p.s[p.pos] <= '9') {
		return ""
	}
	for p.pos < len(p.s) && isIdentByte(p.s[p.pos]) {
		p.pos++
	}
	return p.s[start:p.pos]
}

func (p *pyParser) atom() (*pyNode, error) {
	p.space()
	if p.pos >= len(p.s) {
		return nil, p.syntax("unexpected end of text")
	}
	c := p.s[p.pos]
	switch {
	case c == '[':
		p.pos++
		elts, err := p.items("]")
		if err != nil {
			return nil, err
		}
		return &pyNode{kind: nodeList, elts: elts}, nil
	case c == '(':
		p.pos++
		if p.eat(")") {
			return &pyNode{kind: nodeTuple}, nil
		}
		first, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.eat(")") {
			return first, nil
		}
		if !p.eat(",") {
			return nil, p.syntax("expected ',' or ')'")
		}
		rest, err := p.items(")")
		if err != nil {
			return nil, err
		}
		return &pyNode{kind: nodeTuple, elts: append([]*pyNode{first}, rest...)}, nil
	case c == '{':
		return p.dictOrSet()
	case c == '.' && strings.HasPrefix(p.s[p.pos:], "..."):
		p.pos += 3
		return &pyNode{kind: nodeEllipsis}, nil
	case c >= '0' && c <= '9' || c == '.' && p.pos+1 < len(p.s) && p.s[p.pos+1] >= '0' && p.s[p.pos+1] <= '9':
		return p.number()
	case c == '"' || c == '\'':
		return p.strings()
	}
	if isIdentByte(c) {
		// A string prefix?
		j := p.pos
		for j < len(p.s) && j-p.pos < 3 && strings.ContainsRune("rRbBuUfF", rune(p.s[j])) {
			j++
		}
		if j > p.pos && j < len(p.s) && (p.s[j] == '"' || p.s[j] == '\'') {
			return p.strings()
		}
		name := p.ident()
		switch name {
		case "True":
			return &pyNode{kind: nodeConst, value: true}, nil
		case "False":
			return &pyNode{kind: nodeConst, value: false}, nil
		case "None":
			return &pyNode{kind: nodeConst, value: nil}, nil
		case "lambda", "and", "or", "not", "in", "is", "if", "else", "for", "import", "def", "class", "return", "yield", "await", "from", "with", "while", "pass", "break", "continue", "del", "global", "nonlocal", "raise", "try", "except", "finally", "assert", "elif", "async", "as":
			return nil, p.syntax("the keyword %s", name)
		}
		return &pyNode{kind: nodeName, name: name}, nil
	}
	return nil, p.syntax("unexpected %q", string(c))
}

func (p *pyParser) items(end string) ([]*pyNode, error) {
	var out []*pyNode
	for !p.eat(end) {
		if p.pos >= len(p.s) {
			return nil, p.syntax("'%s' was never closed", map[string]string{"]": "[", ")": "(", "}": "{"}[end])
		}
		if p.eat("*") {
			return nil, &BFCLUnsupportedError{Msg: "a starred item"}
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.keyword("for") {
			return nil, &BFCLDecodeError{Msg: "Exception: Unsupported AST type: <class 'ast.ListComp'>"}
		}
		out = append(out, e)
		if !p.eat(",") && !p.peek(end) {
			return nil, p.syntax("expected ',' or '%s'", end)
		}
	}
	return out, nil
}

func (p *pyParser) dictOrSet() (*pyNode, error) {
	p.pos++ // {
	if p.eat("}") {
		return &pyNode{kind: nodeDict}, nil
	}
	d := &pyNode{kind: nodeDict}
	first := true
	isSet := false
	for !p.eat("}") {
		if p.pos >= len(p.s) {
			return nil, p.syntax("'{' was never closed")
		}
		if p.eat("**") {
			v, err := p.expr()
			if err != nil {
				return nil, err
			}
			d.keys = append(d.keys, nil)
			d.elts = append(d.elts, v)
		} else {
			k, err := p.expr()
			if err != nil {
				return nil, err
			}
			if first && !p.peek(":") {
				isSet = true
			}
			if isSet {
				d.elts = append(d.elts, k)
			} else {
				if !p.eat(":") {
					return nil, p.syntax("expected ':'")
				}
				v, err := p.expr()
				if err != nil {
					return nil, err
				}
				d.keys = append(d.keys, k)
				d.elts = append(d.elts, v)
			}
		}
		first = false
		if !p.eat(",") && !p.peek("}") {
			return nil, p.syntax("expected ',' or '}'")
		}
	}
	if isSet {
		d.kind = nodeSet
	}
	return d, nil
}

func (p *pyParser) number() (*pyNode, error) {
	start := p.pos
	s := p.s
	isFloat := false
	if strings.HasPrefix(s[p.pos:], "0x") || strings.HasPrefix(s[p.pos:], "0X") || strings.HasPrefix(s[p.pos:], "0o") || strings.HasPrefix(s[p.pos:], "0O") || strings.HasPrefix(s[p.pos:], "0b") || strings.HasPrefix(s[p.pos:], "0B") {
		p.pos += 2
		for p.pos < len(s) && (isIdentByte(s[p.pos])) {
			p.pos++
		}
		lit := strings.ReplaceAll(s[start:p.pos], "_", "")
		i, ok := new(big.Int).SetString(lit, 0)
		if !ok {
			return nil, p.syntax("invalid number %q", lit)
		}
		return &pyNode{kind: nodeConst, value: json.Number(i.String())}, nil
	}
	for p.pos < len(s) && (s[p.pos] >= '0' && s[p.pos] <= '9' || s[p.pos] == '_') {
		p.pos++
	}
	if p.pos < len(s) && s[p.pos] == '.' && !strings.HasPrefix(s[p.pos:], "...") {
		isFloat = true
		p.pos++
		for p.pos < len(s) && (s[p.pos] >= '0' && s[p.pos] <= '9' || s[p.pos] == '_') {
			p.pos++
		}
	}
	if p.pos < len(s) && (s[p.pos] == 'e' || s[p.pos] == 'E') {
		j := p.pos + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			isFloat = true
			p.pos = j
			for p.pos < len(s) && (s[p.pos] >= '0' && s[p.pos] <= '9' || s[p.pos] == '_') {
				p.pos++
			}
		}
	}
	if p.pos < len(s) && (s[p.pos] == 'j' || s[p.pos] == 'J') {
		p.pos++
		return nil, &BFCLUnsupportedError{Msg: "a complex number"}
	}
	if p.pos < len(s) && isIdentByte(s[p.pos]) {
		return nil, p.syntax("invalid decimal literal")
	}
	lit := strings.ReplaceAll(s[start:p.pos], "_", "")
	if isFloat {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, p.syntax("invalid number %q", lit)
		}
		if math.IsInf(f, 0) {
			return nil, &BFCLUnsupportedError{Msg: "a float out of range (inf)"}
		}
		return &pyNode{kind: nodeConst, value: f}, nil
	}
	if len(lit) > 1 && lit[0] == '0' && strings.Trim(lit, "0") != "" {
		return nil, p.syntax("leading zeros in decimal integer literals are not permitted")
	}
	i, ok := new(big.Int).SetString(lit, 10)
	if !ok {
		return nil, p.syntax("invalid number %q", lit)
	}
	return &pyNode{kind: nodeConst, value: json.Number(i.String())}, nil
}

// strings parses adjacent string literals, concatenated.
func (p *pyParser) strings() (*pyNode, error) {
	var b strings.Builder
	count := 0
	bytesLit := false
	for {
		p.space()
		j := p.pos
		for j < len(p.s) && j-p.pos < 3 && strings.ContainsRune("rRbBuUfF", rune(p.s[j])) {
			j++
		}
		if j >= len(p.s) || (p.s[j] != '"' && p.s[j] != '\'') {
			break
		}
		prefix := strings.ToLower(p.s[p.pos:j])
		if strings.Contains(prefix, "f") {
			return nil, &BFCLDecodeError{Msg: "Exception: Unsupported AST type: <class 'ast.JoinedStr'>"}
		}
		if strings.Contains(prefix, "b") {
			bytesLit = true
		}
		p.pos = j
		s, err := p.stringLit(strings.Contains(prefix, "r"))
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
		count++
	}
	if count == 0 {
		return nil, p.syntax("expected a string")
	}
	if bytesLit {
		return nil, &BFCLUnsupportedError{Msg: "a bytes literal"}
	}
	return &pyNode{kind: nodeConst, value: b.String()}, nil
}

func (p *pyParser) stringLit(raw bool) (string, error) {
	q := p.s[p.pos : p.pos+1]
	if strings.HasPrefix(p.s[p.pos:], q+q+q) {
		q = q + q + q
	}
	p.pos += len(q)
	var b strings.Builder
	for {
		if p.pos >= len(p.s) {
			return "", p.syntax("unterminated string literal")
		}
		if strings.HasPrefix(p.s[p.pos:], q) {
			p.pos += len(q)
			return b.String(), nil
		}
		c := p.s[p.pos]
		if c == '\n' && len(q) == 1 {
			return "", p.syntax("unterminated string literal")
		}
		if c != '\\' {
			_, size := utf8.DecodeRuneInString(p.s[p.pos:])
			b.WriteString(p.s[p.pos : p.pos+size])
			p.pos += size
			continue
		}
		if p.pos+1 >= len(p.s) {
			return "", p.syntax("unterminated string literal")
		}
		e := p.s[p.pos+1]
		if raw {
			b.WriteByte('\\')
			b.WriteByte(e)
			p.pos += 2
			continue
		}
		p.pos += 2
		switch e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if p.pos+n > len(p.s) {
				return "", p.syntax("truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(p.s[p.pos:p.pos+n], 16, 32)
			if err != nil || v > utf8.MaxRune {
				return "", p.syntax("truncated \\%c escape", e)
			}
			if v >= 0xD800 && v <= 0xDFFF {
				return "", &BFCLUnsupportedError{Msg: "a lone surrogate escape"}
			}
			b.WriteRune(rune(v))
			p.pos += n
		case 'N':
			return "", &BFCLUnsupportedError{Msg: "a \\N{...} escape"}
		default:
			if e >= '0' && e <= '7' {
				v := int(e - '0')
				for k := 0; k < 2 && p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '7'; k++ {
					v = v*8 + int(p.s[p.pos]-'0')
					p.pos++
				}
				b.WriteRune(rune(v))
			} else {
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		}
	}
}
