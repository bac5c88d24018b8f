package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// maxDepth is encoding/json's nesting limit: a value nested deeper is
// invalid.
const maxDepth = 10000

// Valid reports whether b is one JSON value with optional whitespace
// around it. It gives encoding/json.Valid's answer for every input (bytes
// that are not UTF-8 are accepted inside strings, nesting is limited to
// 10,000 levels), several times faster on the long strings that tool
// arguments and results carry: encoding/json steps a state machine through
// every byte, Valid skips eight plain string bytes at a time.
func Valid(b []byte) bool {
	ok, _ := validate(b)
	return ok
}

// ValidCompact reports what [Valid] does, and whether b is also compact:
// no whitespace outside its strings, so that json.Compact would return it
// unchanged.
func ValidCompact(b []byte) (valid, compact bool) {
	ok, ws := validate(b)
	return ok, ok && !ws
}

// skipWS is SkipWS that records, in *ws, whether it skipped anything.
func skipWS(b []byte, i int, ws *bool) int {
	j := SkipWS(b, i)
	if j != i {
		*ws = true
	}
	return j
}

// validate reports whether b is valid and whether it has whitespace
// outside strings.
func validate(b []byte) (ok, ws bool) {
	var buf [32]byte
	stack := buf[:0] // the closing byte of each open container
	i := skipWS(b, 0, &ws)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false, ws
		}
		switch b[i] {
		case '{', '[':
			if len(stack) >= maxDepth {
				return false, ws
			}
			closer := b[i] + 2 // '{'+2 is '}', '['+2 is ']'
			i = skipWS(b, i+1, &ws)
			if i < len(b) && b[i] == closer {
				i++
				break
			}
			stack = append(stack, closer)
			if closer == '}' {
				if i = validKey(b, i, &ws); i < 0 {
					return false, ws
				}
			}
			continue
		case '"':
			i = validString(b, i)
		case 't':
			i = literal(b, i, "true")
		case 'f':
			i = literal(b, i, "false")
		case 'n':
			i = literal(b, i, "null")
		default:
			i = validNumber(b, i)
		}
		if i < 0 {
			return false, ws
		}
		// A value ended at i: close containers until a comma or the end.
		for {
			i = skipWS(b, i, &ws)
			if len(stack) == 0 {
				return i == len(b), ws
			}
			if i >= len(b) {
				return false, ws
			}
			top := stack[len(stack)-1]
			if b[i] == top {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return false, ws
			}
			i = skipWS(b, i+1, &ws)
			if top == '}' {
				if i = validKey(b, i, &ws); i < 0 {
					return false, ws
				}
			}
			break
		}
	}
}

// validKey checks the key and colon of an object member at b[i] and
// returns the index of its value, or -1.
func validKey(b []byte, i int, ws *bool) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = validString(b, i); i < 0 {
		return -1
	}
	i = skipWS(b, i, ws)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipWS(b, i+1, ws)
}

func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special has the high bit of each byte of x that is a quote, a backslash
// or a control character set, and possibly of bytes after the first such
// byte (a borrow); bytes before it are exact.
func special(x uint64) uint64 {
	quote := x ^ (ones * '"')
	backslash := x ^ (ones * '\\')
	return ((quote-ones)&^quote | (backslash-ones)&^backslash | (x-ones*0x20)&^x) & highs
}

// validString returns the index just past the valid JSON string at b[i]
// (b[i] is its opening quote), or -1.
func validString(b []byte, i int) int {
	j := i + 1
	for {
		for len(b)-j >= 8 {
			m := special(binary.LittleEndian.Uint64(b[j:]))
			if m != 0 {
				j += bits.TrailingZeros64(m) / 8
				break
			}
			j += 8
		}
		if j >= len(b) {
			return -1
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if j+1 >= len(b) {
				return -1
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if len(b)-j < 6 || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) || !isHex(b[j+5]) {
					return -1
				}
				j += 6
			default:
				return -1
			}
		default:
			j++
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validNumber returns the index just past the JSON number at b[i], or -1.
// What follows the number is the caller's to check.
func validNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i+1 >= len(b) || !isDigit(b[i+1]) {
			return -1
		}
		i = digits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
