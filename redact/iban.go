package redact

// ibanLengths is the length of each country's IBAN, from the SWIFT IBAN registry
// (release 99, 2025): a country code and two check digits that a text happens to hold
// must also be followed by exactly that many characters to be one.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
	"LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
	"NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// findIBANs reports every IBAN of s: a country code of the registry (both letters of
// one case) and two digits at the start of a word, then letters and digits, grouped or
// not by single spaces or hyphens, to exactly the country's length and the end of a
// word, passing the ISO 13616 check (mod 97).
func findIBANs(s string, add func(start, end int)) {
	for i := 0; i+4 <= len(s); i++ {
		if i > 0 && isAlnum(s[i-1]) {
			continue
		}
		if !isLetter(s[i]) || !isLetter(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) || (s[i]^s[i+1])&0x20 != 0 {
			continue
		}
		length, ok := ibanLengths[string([]byte{upper(s[i]), upper(s[i+1])})]
		if !ok {
			continue
		}
		code := make([]byte, 0, length)
		j := i
		for j < len(s) && len(code) < length {
			switch {
			case isAlnum(s[j]):
				code = append(code, upper(s[j]))
				j++
			case (s[j] == ' ' || s[j] == '-') && len(code) >= 4 && j+1 < len(s) && isAlnum(s[j+1]):
				j++
			default:
				j = len(s) + 1 // too short
			}
		}
		if len(code) != length || (j < len(s) && isAlnum(s[j])) {
			continue
		}
		if mod97(code) == 1 {
			add(i, j)
			i = j - 1
		}
	}
}

// mod97 is the remainder of an IBAN by 97 as ISO 13616 computes it: the first four
// characters moved to the end, each letter read as two digits (A is 10, Z is 35).
func mod97(code []byte) int {
	r := 0
	for k := range code {
		c := code[(k+4)%len(code)]
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
		} else {
			r = (r*100 + int(c-'A') + 10) % 97
		}
	}
	return r
}

// upper is c in upper case, when it is an ASCII letter.
func upper(c byte) byte {
	if isLetter(c) {
		return c &^ 0x20
	}
	return c
}
