package validation

import (
	"fmt"
	"strings"
)

// IP prefixes as Terraform reads them.
//
// Terraform's cidr functions read a prefix with a copy of Go 1.16's net.ParseCIDR, kept so that
// prefixes which read before Go 1.17 still do: decimal numbers with leading zeros ("010.0.0.0/8",
// "10.0.0.0/008"), hexadecimal groups with leading zeros ("00001::/16", any number of digits for a
// value up to 0xffff) and IPv4 addresses within IPv6 ones ("::ffff:10.0.0.0/104"). Kubernetes'
// isCIDR() reads none of those, so a rule of it would refuse what Terraform accepts. The grammar
// that parser reads is regular, and so is the language of the prefixes it accepts: the patterns
// below are that language, checked against the parser and against terraform itself
// (cidr_test.go). They match ASCII strings only; Terraform reads a string's NFC form, and no
// character outside ASCII has one made of the characters of a prefix (also checked there), so
// they decide every string as Terraform does.

// The parts of a prefix, as Go 1.16's parser reads them.
const (
	// A decimal number with leading zeros, at most 255.
	cidrOctet = `0*(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`
	// A group of hexadecimal digits with leading zeros, at most 0xffff.
	cidrGroup = `0*[0-9A-Fa-f]{1,4}`
	// Prefix lengths, decimal with leading zeros: up to 32 bits of IPv4, 128 of IPv6, and the
	// lengths from 96 on of IPv6.
	cidrBits4   = `0*(?:3[0-2]|[12]?[0-9])`
	cidrBits6   = `0*(?:12[0-8]|1[01][0-9]|[1-9]?[0-9])`
	cidrBits696 = `0*(?:12[0-8]|1[01][0-9]|9[6-9])`
)

var (
	cidrIPv4 = cidrOctet + `(?:\.` + cidrOctet + `){3}`
	// terraformCIDR matches the strings cidrhost(s, 0) accepts: the prefixes Terraform reads.
	terraformCIDR = `^(?:` + cidrIPv4 + `/` + cidrBits4 + `|` + cidrIPv6() + `/` + cidrBits6 + `)$`
	// cidrNetmaskSuperset matches the strings cidrnetmask(s) accepts, and more: IPv4 prefixes
	// exactly, and every IPv6 prefix of at least 96 bits, where cidrnetmask accepts those of
	// addresses within ::ffff:0:0/96 only.
	cidrNetmaskSuperset = `^(?:` + cidrIPv4 + `/` + cidrBits4 + `|` + cidrIPv6() + `/` + cidrBits696 + `)$`
)

// Where the pattern costs more than a rule may, Kubernetes' isCIDR() and a shorter pattern of the
// forms it refuses and Terraform may read stand in for it: they hold for every prefix Terraform
// reads, and for some strings it does not (those with a leading zero, a long group or an IPv4
// address within IPv6 that are no prefix all the same), which they leave to Terraform.
const (
	// cidrShape is the shape of a prefix: hexadecimal digits, dots and colons, a slash and
	// decimal digits.
	cidrShape = `^[0-9A-Fa-f:.]+/[0-9]+$`
	// cidrLenient matches the prefixes Terraform reads and isCIDR() does not: numbers with
	// leading zeros, more than four hexadecimal digits, IPv4 addresses within IPv6 ones, and
	// IPv4-mapped IPv6 addresses in groups (::ffff:a00:0), which isCIDR() refuses.
	cidrLenient = `(^|[.:/])0[0-9a-fA-F]|[0-9a-fA-F]{5}|:.*\.|[fF]{4}`
)

// cidrCheaper reports whether re is one of the patterns of IP prefixes, and whether of IPv4 ones
// (cidrnetmask's).
func cidrCheaper(re string) (ipv4, ok bool) {
	switch re {
	case terraformCIDR:
		return false, true
	case cidrNetmaskSuperset:
		return true, true
	}
	return false, false
}

// cidrIPv6 is a pattern of the IPv6 addresses Go 1.16's parser reads: eight groups, or six and an
// IPv4 address, where one "::" stands for one or more groups of zeros.
func cidrIPv6() string {
	g := cidrGroup
	// groups(n) is n groups separated by colons, trailing(n) up to n of them.
	groups := func(n int) string {
		switch n {
		case 0:
			return ""
		case 1:
			return g
		}
		return fmt.Sprintf(`(?:%s:){%d}%s`, g, n-1, g)
	}
	// upTo(n) is up to n groups, and up to n-2 followed by an IPv4 address, or nothing.
	upTo := func(n int) string {
		if n == 0 {
			return ""
		}
		alts := []string{fmt.Sprintf(`(?:%s:){0,%d}%s`, g, n-1, g)}
		if n == 1 {
			alts[0] = g
		}
		switch {
		case n == 2:
			alts = append(alts, cidrIPv4)
		case n > 2:
			alts = append(alts, fmt.Sprintf(`(?:%s:){0,%d}%s`, g, n-2, cidrIPv4))
		}
		return `(?:` + strings.Join(alts, "|") + `)?`
	}
	alts := []string{groups(8), fmt.Sprintf(`(?:%s:){6}%s`, g, cidrIPv4)}
	// With "::" after k groups (0 to 7), at most 7-k follow: it stands for at least one.
	for k := range 8 {
		alts = append(alts, groups(k)+`::`+upTo(7-k))
	}
	return `(?:` + strings.Join(alts, "|") + `)`
}

// cidrPattern is the pattern of the strings can(cidrhost(s, 0)) accepts (ipv4 false), exactly,
// or of those can(cidrnetmask(s)) accepts (ipv4 true), and some IPv6 prefixes it does not.
func cidrPattern(ipv4 bool) (re string, exact bool) {
	if ipv4 {
		return cidrNetmaskSuperset, false
	}
	return terraformCIDR, true
}
