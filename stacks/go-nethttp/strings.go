package main

import (
	"encoding/json"
	"net/http"
)

// defaultStringsInput is the text /strings uses without ?s=.
const defaultStringsInput = "Hello, People"

// maxStringsLen bounds ?s= of /strings.
const maxStringsLen = 256

// validStringsInput says whether s is 1 to maxStringsLen printable ASCII characters.
func validStringsInput(s string) bool {
	if len(s) == 0 || len(s) > maxStringsLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// manipulate is seed 4's string manipulation, the same as the JVM stacks'
// (stacks/jvm-common Strings.java): reverse s, upper-case it, and join it to s with "|".
func manipulate(s string) string {
	out := make([]byte, 0, 2*len(s)+1)
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 32
		}
		out = append(out, c)
	}
	out = append(out, '|')
	return string(append(out, s...))
}

// stringsAnswer is the /strings document for s.
type stringsAnswer struct {
	Output string `json:"output"`
	Length int    `json:"length"`
}

// stringsHandler answers GET /strings?s=: {"output":"...","length":N}, 400 for a bad s.
func stringsHandler(w http.ResponseWriter, r *http.Request) {
	s := defaultStringsInput
	if raw, ok := r.URL.Query()["s"]; ok {
		s = raw[0]
	}
	if !validStringsInput(s) {
		writeError(w, http.StatusBadRequest, "s must be 1 to 256 printable ASCII characters")
		return
	}
	out := manipulate(s)
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // as the JVM stacks write it
	_ = enc.Encode(stringsAnswer{Output: out, Length: len(out)})
}
