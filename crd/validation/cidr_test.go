package validation

import (
	"encoding/json"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"

	"github.com/modkind/modkind/crd/internal/crdtest"
)

// go116Prefix is what Terraform's copy of Go 1.16's net.ParseCIDR makes of s, written out here
// from that parser's rules: whether it reads s (host), and whether cidrnetmask(s) has a mask
// (netmask: the network address is an IPv4 one, or an IPv4-mapped IPv6 one).
func go116Prefix(s string) (host, netmask bool) {
	addr, bits, ok := strings.Cut(s, "/")
	if !ok {
		return false, false
	}
	size := 32
	ip, ok := go116IPv4(addr)
	if !ok {
		size = 128
		if ip, ok = go116IPv6(addr); !ok {
			return false, false
		}
	}
	n, used, ok := go116Decimal(bits)
	if !ok || used != len(bits) || n > size {
		return false, false
	}
	if size == 32 {
		return true, true
	}
	// The network address keeps the first n bits: IPv4-mapped where those keep ::ffff.
	mapped := n >= 96
	for i, b := range ip[:12] {
		want := byte(0)
		if i >= 10 {
			want = 0xff
		}
		mapped = mapped && b == want
	}
	return true, mapped
}

// go116Decimal reads a decimal number at the start of s: digits, leading zeros allowed, below
// 0xffffff; the number and how many bytes it took.
func go116Decimal(s string) (n, used int, ok bool) {
	for used < len(s) && '0' <= s[used] && s[used] <= '9' {
		n = n*10 + int(s[used]-'0')
		if n >= 0xffffff {
			return 0, used, false
		}
		used++
	}
	return n, used, used > 0
}

// go116Hex reads a hexadecimal number at the start of s, as go116Decimal does.
func go116Hex(s string) (n, used int, ok bool) {
	for used < len(s) {
		d, err := strconv.ParseUint(s[used:used+1], 16, 8)
		if err != nil {
			break
		}
		n = n*16 + int(d)
		if n >= 0xffffff {
			return 0, used, false
		}
		used++
	}
	return n, used, used > 0
}

func go116IPv4(s string) ([16]byte, bool) {
	var ip [16]byte
	ip[10], ip[11] = 0xff, 0xff
	for i := range 4 {
		if i > 0 {
			if !strings.HasPrefix(s, ".") {
				return ip, false
			}
			s = s[1:]
		}
		n, used, ok := go116Decimal(s)
		if !ok || n > 0xff {
			return ip, false
		}
		ip[12+i] = byte(n)
		s = s[used:]
	}
	return ip, s == ""
}

func go116IPv6(s string) ([16]byte, bool) {
	var ip [16]byte
	ellipsis := -1
	if strings.HasPrefix(s, "::") {
		ellipsis, s = 0, s[2:]
		if s == "" {
			return ip, true
		}
	}
	i := 0
	for i < 16 {
		n, used, ok := go116Hex(s)
		if !ok || n > 0xffff {
			return ip, false
		}
		if used < len(s) && s[used] == '.' {
			// An IPv4 address ends it, where 4 bytes are left (or may be, after "::").
			if ellipsis < 0 && i != 12 || i+4 > 16 {
				return ip, false
			}
			v4, ok := go116IPv4(s)
			if !ok {
				return ip, false
			}
			copy(ip[i:], v4[12:])
			s, i = "", i+4
			break
		}
		ip[i], ip[i+1] = byte(n>>8), byte(n)
		i += 2
		s = s[used:]
		if s == "" {
			break
		}
		if s[0] != ':' || len(s) == 1 {
			return ip, false
		}
		s = s[1:]
		if s[0] == ':' {
			if ellipsis >= 0 {
				return ip, false
			}
			ellipsis, s = i, s[1:]
			if s == "" {
				break
			}
		}
	}
	if s != "" {
		return ip, false
	}
	if i < 16 {
		if ellipsis < 0 {
			return ip, false
		}
		n := 16 - i
		copy(ip[ellipsis+n:], ip[ellipsis:i])
		clear(ip[ellipsis : ellipsis+n])
	} else if ellipsis >= 0 {
		// "::" stands for at least one group.
		return ip, false
	}
	return ip, true
}

// cidrCases are strings on both sides of what Terraform's parser reads, with what
// can(cidrhost(s, 0)) and can(cidrnetmask(s)) say of each (checked with terraform itself by
// TestCIDRFactsTerraform).
var cidrCases = []struct {
	reason        string
	s             string
	host, netmask bool
}{
	{reason: "An IPv4 prefix.", s: "10.0.0.0/16", host: true, netmask: true},
	{reason: "An IPv4 address with a prefix of 32 bits.", s: "10.0.0.1/32", host: true, netmask: true},
	{reason: "An IPv6 prefix: no netmask.", s: "2001:db8::/32", host: true},
	{reason: "Leading zeros in an octet: Go 1.16 read them.", s: "010.0.0.0/8", host: true, netmask: true},
	{reason: "Leading zeros in the prefix length.", s: "10.0.0.0/08", host: true, netmask: true},
	{reason: "Many leading zeros in the prefix length.", s: "10.0.0.0/0000000000000000008", host: true, netmask: true},
	{reason: "Leading zeros in every octet.", s: "000000010.00.0.0000255/0", host: true, netmask: true},
	{reason: "Five hexadecimal digits for a value up to 0xffff.", s: "00001::/16", host: true},
	{reason: "A group above 0xffff.", s: "10000::/16"},
	{reason: "A group of many leading zeros.", s: "0000000000000000ffff::/16", host: true},
	{reason: "An IPv4-mapped IPv6 prefix of 104 bits has a netmask.", s: "::ffff:10.0.0.0/104", host: true, netmask: true},
	{reason: "An IPv4-mapped IPv6 prefix of 8 bits keeps no ::ffff: no netmask.", s: "::ffff:10.0.0.0/8", host: true},
	{reason: "An IPv4-mapped address in hexadecimal groups.", s: "0:0:0:0:0:ffff:a00:0/96", host: true, netmask: true},
	{reason: "An IPv4-mapped IPv6 prefix in groups, which isCIDR() refuses.", s: "::ffff:a00:0/96", host: true, netmask: true},
	{reason: "An IPv4-mapped IPv6 prefix in upper case groups.", s: "::FFFF:a00:0/104", host: true, netmask: true},
	{reason: "An IPv4 address after six groups.", s: "1:2:3:4:5:6:1.2.3.4/128", host: true},
	{reason: "An IPv4 address after five groups: too few.", s: "1:2:3:4:5:1.2.3.4/128"},
	{reason: "An IPv4 address after \"::\" and five groups: \"::\" stands for one.", s: "::1:2:3:4:5:1.2.3.4/128", host: true},
	{reason: "An IPv4 address after \"::\" and six groups: \"::\" stands for none.", s: "::1:2:3:4:5:6:1.2.3.4/128"},
	{reason: "Eight groups and \"::\": it stands for none.", s: "1:2:3:4::5:6:7:8/64"},
	{reason: "Seven groups and \"::\".", s: "1:2:3:4::5:6:7/64", host: true},
	{reason: "\"::\" alone.", s: "::/0", host: true},
	{reason: "\"::\" at the end.", s: "fe80::/10", host: true},
	{reason: "Two \"::\".", s: "1::2::3/64"},
	{reason: "\":::\".", s: "1:::2/64"},
	{reason: "A prefix longer than 32 bits for IPv4.", s: "1.2.3.4/33"},
	{reason: "A prefix of 128 bits for IPv6.", s: "::1/128", host: true},
	{reason: "A prefix longer than 128 bits.", s: "::1/129"},
	{reason: "No prefix length.", s: "10.0.0.0"},
	{reason: "An empty prefix length.", s: "10.0.0.0/"},
	{reason: "A signed prefix length.", s: "10.0.0.0/+8"},
	{reason: "A second slash.", s: "10.0.0.0/8/8"},
	{reason: "A zone.", s: "fe80::1%eth0/64"},
	{reason: "An octet above 255.", s: "256.0.0.0/8"},
	{reason: "Three octets.", s: "10.0.0/8"},
	{reason: "Hexadecimal in IPv4.", s: "0x0a.0.0.0/8"},
	{reason: "Spaces around it.", s: " 10.0.0.0/8"},
	{reason: "A trailing newline.", s: "10.0.0.0/8\n"},
	{reason: "Upper case hexadecimal digits.", s: "2001:DB8::/32", host: true},
	{reason: "A word.", s: "not-a-cidr"},
	{reason: "Nothing.", s: ""},
}

func TestCIDRPatterns(t *testing.T) {
	host, netmask := regexp.MustCompile(terraformCIDR), regexp.MustCompile(cidrNetmaskSuperset)
	for _, c := range cidrCases {
		gotHost, gotNetmask := go116Prefix(c.s)
		if diff := cmp.Diff([2]bool{c.host, c.netmask}, [2]bool{gotHost, gotNetmask}); diff != "" {
			t.Errorf("\n%s\n%q: cidrhost and cidrnetmask accept it, by Go 1.16's parser (-want +got):\n%s", c.reason, c.s, diff)
		}
		if diff := cmp.Diff(c.host, host.MatchString(c.s)); diff != "" {
			t.Errorf("\n%s\n%q: terraformCIDR matches it (-want +got):\n%s", c.reason, c.s, diff)
		}
		if c.netmask && !netmask.MatchString(c.s) {
			t.Errorf("\n%s\n%q: cidrnetmask accepts it, cidrNetmaskSuperset does not match it", c.reason, c.s)
		}
	}
	// Strings made of the parts of prefixes, most of them near one: the patterns say what the
	// parser says, and the cheaper tests that stand in for them (isCIDR() or the short pattern)
	// hold for every prefix the parser reads.
	shape, lenient := regexp.MustCompile(cidrShape), regexp.MustCompile(cidrLenient)
	cheaper := func(s string, ipv4 bool) bool {
		pr, err := netip.ParsePrefix(s)
		isCIDR := err == nil && !pr.Addr().Is4In6() && pr.Addr().Zone() == "" && (!ipv4 || pr.Addr().Is4())
		return isCIDR || shape.MatchString(s) && lenient.MatchString(s)
	}
	for _, c := range cidrCases {
		if c.host && !cheaper(c.s, false) || c.netmask && !cheaper(c.s, true) {
			t.Errorf("\n%s\n%q: Terraform reads it, the cheaper tests refuse it", c.reason, c.s)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 200_000 {
		s := randomPrefix(r)
		wantHost, wantNetmask := go116Prefix(s)
		if wantHost {
			accepted++
		}
		if host.MatchString(s) != wantHost {
			t.Fatalf("%q: Go 1.16's parser reads it: %v; terraformCIDR matches it: %v", s, wantHost, !wantHost)
		}
		if wantHost && !cheaper(s, false) || wantNetmask && !cheaper(s, true) {
			t.Fatalf("%q: Terraform reads it, the cheaper tests refuse it", s)
		}
		got := netmask.MatchString(s)
		_, v4 := go116IPv4(strings.Split(s, "/")[0])
		if wantNetmask && !got || v4 && got != wantNetmask {
			t.Fatalf("%q: cidrnetmask accepts it: %v; cidrNetmaskSuperset matches it: %v", s, wantNetmask, got)
		}
	}
	if accepted < 20_000 || accepted > 180_000 {
		t.Fatalf("%d of 200000 random strings are prefixes: too few of one side to tell", accepted)
	}
}

// randomPrefix makes a string of the parts of IP prefixes, often one, often off by a little.
func randomPrefix(r *rand.Rand) string {
	num := func(base, most int) string {
		s := strconv.FormatInt(int64(r.IntN(most+1)), base)
		if r.IntN(4) == 0 {
			s = strings.Repeat("0", r.IntN(4)) + s
		}
		if base == 16 && r.IntN(2) == 0 {
			s = strings.ToUpper(s)
		}
		return s
	}
	v4 := func() string {
		n := 4
		switch r.IntN(8) {
		case 0:
			n = 3
		case 1:
			n = 5
		}
		parts := make([]string, n)
		for i := range parts {
			parts[i] = num(10, 256+r.IntN(2)*100)
		}
		return strings.Join(parts, ".")
	}
	var b strings.Builder
	switch r.IntN(3) {
	case 0:
		b.WriteString(v4())
	default:
		n := r.IntN(10)
		ellipsis := r.IntN(n+2) - 1
		for i := range n {
			if i == ellipsis {
				b.WriteString("::")
			} else if i > 0 {
				b.WriteString(":")
			}
			b.WriteString(num(16, 0xffff+r.IntN(2)*0x10))
		}
		if ellipsis == n || n == 0 {
			b.WriteString("::")
		}
		if r.IntN(4) == 0 {
			if !strings.HasSuffix(b.String(), ":") {
				b.WriteString(":")
			}
			b.WriteString(v4())
		}
	}
	switch r.IntN(12) {
	case 0:
	case 1:
		b.WriteString("/")
	case 2:
		b.WriteString("/x")
	case 3:
		b.WriteString(string("%:./ g"[r.IntN(6)]))
		fallthrough
	default:
		b.WriteString("/" + num(10, 140))
	}
	return b.String()
}

// TestCIDRNormalForms checks that no character outside ASCII has a normal form (NFC) made of
// the characters of an IP prefix only: Terraform reads the NFC form of a string, the patterns
// search the string as given, and a string with such a character is then no prefix for either.
func TestCIDRNormalForms(t *testing.T) {
	prefixChars := regexp.MustCompile(`^[0-9A-Fa-f.:/]*$`)
	for r := rune(0x80); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if n := norm.NFC.String(string(r)); prefixChars.MatchString(n) {
			t.Errorf("U+%04X: its normal form %q is made of the characters of a prefix", r, n)
		}
	}
}

// TestCIDRFactsTerraform has terraform itself decide can(cidrhost(s, 0)) and can(cidrnetmask(s))
// for the hand cases and a sample of random strings, in one terraform console: the patterns, and
// go116Prefix, must say what it says.
func TestCIDRFactsTerraform(t *testing.T) {
	tf := crdtest.Terraform(t)
	strs := []string{}
	for _, c := range cidrCases {
		strs = append(strs, c.s)
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for range 400 {
		strs = append(strs, randomPrefix(r))
	}
	dir := t.TempDir()
	raw, err := json.Marshal(strs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "strings.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tf, "console")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(`jsonencode([for s in jsondecode(file("strings.json")) : [can(cidrhost(s, 0)), can(cidrnetmask(s))]])` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("terraform console: %v\n%s", err, out)
	}
	var quoted string
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &quoted); err != nil {
		t.Fatalf("terraform console's answer %q: %v", out, err)
	}
	var decided [][2]bool
	if err := json.Unmarshal([]byte(quoted), &decided); err != nil || len(decided) != len(strs) {
		t.Fatalf("terraform console's answer %q: %v", quoted, err)
	}
	host, netmask := regexp.MustCompile(terraformCIDR), regexp.MustCompile(cidrNetmaskSuperset)
	for i, s := range strs {
		h, n := go116Prefix(s)
		if diff := cmp.Diff(decided[i], [2]bool{h, n}); diff != "" {
			t.Errorf("\n%q: terraform's cidrhost and cidrnetmask accept it (-terraform +go116Prefix):\n%s", s, diff)
		}
		if host.MatchString(s) != decided[i][0] {
			t.Errorf("\n%q: terraform's cidrhost accepts it: %v; terraformCIDR does not say so", s, decided[i][0])
		}
		if decided[i][1] && !netmask.MatchString(s) {
			t.Errorf("\n%q: terraform's cidrnetmask accepts it, cidrNetmaskSuperset does not match it", s)
		}
	}
	t.Logf("%d strings decided by %s", len(strs), tf)
}
