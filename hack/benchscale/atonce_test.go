package main

import (
	"testing"
	"time"
)

func TestMostAtOnce(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(1000+s), 0) }
	cases := []struct {
		reason string
		spans  [][2]time.Time
		want   int
	}{
		{"No Run ran.", nil, 0},
		{"Three Runs over the same seconds.", [][2]time.Time{{at(0), at(3)}, {at(1), at(4)}, {at(2), at(5)}}, 3},
		{"A Run that ends in the second another starts is taken as ended.", [][2]time.Time{{at(0), at(2)}, {at(2), at(4)}}, 1},
		{"Two at once, then one, then two others.", [][2]time.Time{{at(0), at(5)}, {at(1), at(2)}, {at(3), at(4)}, {at(3), at(4)}}, 3},
	}
	for _, tc := range cases {
		if got := mostAtOnce(tc.spans); got != tc.want {
			t.Errorf("\n%s\nmostAtOnce: want %d, got %d", tc.reason, tc.want, got)
		}
	}
}
