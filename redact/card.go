package redact

import "strconv"

// findCards reports every payment card number of s: a run of 13 to 19 digits, written
// whole or in groups separated by one space or hyphen as cards print them (4-4-4-4,
// 4-4-4-4-3, 4-6-5, 4-6-4), that starts with the prefix of a card network at one of its
// lengths and passes the Luhn check. A run next to a letter, a "+" (a phone number) or a
// decimal mark, or longer than the card it would hold, is no card: an order or account
// number that happens to pass the Luhn check (one in ten does) must still start like a
// card, be as long as one, and be grouped like one.
func findCards(s string, add func(start, end int)) {
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		start := i
		var groups []int
		digits := make([]byte, 0, 24)
		n := 0
		for i < len(s) && isDigit(s[i]) {
			digits = append(digits, s[i])
			n++
			i++
			if i+1 < len(s) && (s[i] == ' ' || s[i] == '-') && isDigit(s[i+1]) {
				groups = append(groups, n)
				n = 0
				i++
			}
		}
		groups = append(groups, n)
		if start > 0 && (isAlnum(s[start-1]) || s[start-1] == '+' || decimalMark(s, start-1)) {
			continue
		}
		if i < len(s) && (isAlnum(s[i]) || decimalMark(s, i)) {
			continue
		}
		if cardGrouping(groups) && issued(string(digits)) && luhn(digits) {
			add(start, i)
		}
	}
}

// decimalMark says whether s[i] is a point or a comma between digits: the digits
// around it are one number's.
func decimalMark(s string, i int) bool {
	return (s[i] == '.' || s[i] == ',') && i > 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1])
}

// cardGrouping says whether groups (the digits of each group, in order) is how a card
// number is written: whole, or in fours with a shorter last group, or 4-6-5 and 4-6-4.
func cardGrouping(groups []int) bool {
	total := 0
	for _, g := range groups {
		total += g
	}
	if total < 13 || total > 19 {
		return false
	}
	switch {
	case len(groups) == 1:
		return true
	case len(groups) == 3 && groups[0] == 4 && groups[1] == 6 && (groups[2] == 5 || groups[2] == 4):
		return true
	}
	for i, g := range groups {
		last := i == len(groups)-1
		if g != 4 && (!last || g > 4) {
			return false
		}
	}
	return true
}

// issued says whether digits start with the prefix of a card network and have one of
// its lengths: Visa, Mastercard, American Express, Diners Club, JCB, Discover, UnionPay,
// Maestro, Mir, RuPay and UATP.
func issued(d string) bool {
	n := len(d)
	p := func(k int) int {
		v, _ := strconv.Atoi(d[:k])
		return v
	}
	switch {
	case d[0] == '4': // Visa
		return n == 13 || n == 16 || n == 19
	case p(2) >= 51 && p(2) <= 55, p(4) >= 2221 && p(4) <= 2720: // Mastercard
		return n == 16
	case p(4) >= 2200 && p(4) <= 2204: // Mir
		return n >= 16
	case p(2) == 34 || p(2) == 37: // American Express
		return n == 15
	case p(3) >= 300 && p(3) <= 305, p(2) == 36, p(2) == 38, p(2) == 39: // Diners Club
		return n >= 14
	case p(4) >= 3528 && p(4) <= 3589: // JCB
		return n >= 16
	case p(2) == 50, p(2) >= 56 && p(2) <= 58: // Maestro
		return n >= 13
	case d[0] == '6': // Discover, UnionPay, Maestro, RuPay
		return n >= 13
	case p(2) == 81 || p(2) == 82: // UnionPay, RuPay
		return n >= 16
	case d[0] == '1': // UATP
		return n == 15
	}
	return false
}

// luhn is the Luhn check of ISO/IEC 7812: from the right, every second digit doubled
// (less 9 past 9), the sum a multiple of 10.
func luhn(digits []byte) bool {
	sum := 0
	for i := range digits {
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isAlnum(c byte) bool { return isDigit(c) || isLetter(c) }
