package units

import (
	"math"
	"testing"
)

func TestFormatters(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"Duration 0", Duration(0), "0 ns"},
		{"Duration 999", Duration(999), "999 ns"},
		{"Duration 1000", Duration(1000), "1.00 µs"},
		{"Duration 12.5 µs", Duration(12_500), "12.50 µs"},
		{"Duration round to ms", Duration(999_996), "1.00 ms"},
		{"Duration 3.2 ms", Duration(3_200_000), "3.20 ms"},
		{"Duration round to s", Duration(999_996_000), "1.00 s"},
		{"Duration 1.23 s", Duration(1_234_000_000), "1.23 s"},
		{"Duration 59.99 s", Duration(59_990_000_000), "59.99 s"},
		{"Duration round to min", Duration(59_996_000_000), "1 min 00 s"},
		{"Duration min", Duration(125_400_000_000), "2 min 05 s"},
		{"Duration h", Duration(3_723_000_000_000), "1 h 02 min 03 s"},
		{"Duration negative", Duration(-1500), "-1.50 µs"},

		{"DurationInSeconds ns", DurationInSeconds(750), "750 ns"},
		{"DurationInSeconds µs", DurationInSeconds(12_500), "12.50 µs"},
		{"DurationInSeconds ms", DurationInSeconds(3_200_000), "3.20 ms"},
		{"DurationInSeconds s", DurationInSeconds(1_234_000_000), "1.23 s"},
		{"DurationInSeconds no minutes", DurationInSeconds(125_400_000_000), "125.40 s"},

		{"Seconds 1", Seconds(1), "1 s"},
		{"Seconds 0.25", Seconds(0.25), "0.25 s"},
		{"Seconds 2.5", Seconds(2.5), "2.5 s"},
		{"Seconds 1000", Seconds(1000), "1000 s"},

		{"DurationSignificant ns", DurationSignificant(800), "800 ns"},
		{"DurationSignificant µs", DurationSignificant(12_500), "12.5 µs"},
		{"DurationSignificant ms", DurationSignificant(12_500_000), "12.5 ms"},
		{"DurationSignificant s", DurationSignificant(4_200_000_000), "4.2 s"},
		{"DurationSignificant 6 digits", DurationSignificant(1_234_567_890), "1.23457 s"},
		{"DurationSignificant no minutes", DurationSignificant(125_400_000_000), "125.4 s"},

		{"FixedSeconds 2", FixedSeconds(1_234_000_000, 2), "1.23 s"},
		{"FixedSeconds short", FixedSeconds(12_000, 3), "0.000 s"},
		{"FixedSeconds 6", FixedSeconds(12_000, 6), "0.000012 s"},

		{"SecondsCell", SecondsCell(1_234_000_000), "1.234"},
		{"SecondsCell short", SecondsCell(12_000), "0.000"},

		{"SecondsCellFine", SecondsCellFine(1.234), "1.234"},
		{"SecondsCellFine short", SecondsCellFine(0.001234), "0.001234"},
		{"SecondsCellFine 0", SecondsCellFine(0), "0.000"},

		{"SecondsOrMilliseconds s", SecondsOrMilliseconds(1.234), "1.234 s"},
		{"SecondsOrMilliseconds ms", SecondsOrMilliseconds(0.012345), "12.345 ms"},
		{"SecondsOrMilliseconds 0", SecondsOrMilliseconds(0), "0.000 s"},
		{"SecondsOrMilliseconds NaN", SecondsOrMilliseconds(math.NaN()), "-"},

		{"Bytes 0", Bytes(0), "0 B"},
		{"Bytes 1023", Bytes(1023), "1023 B"},
		{"Bytes KiB", Bytes(1024), "1.0 KiB"},
		{"Bytes 36 KiB", Bytes(36 << 10), "36.0 KiB"},
		{"Bytes GiB", Bytes(3 << 29), "1.5 GiB"},
		{"Bytes TiB", Bytes(5 << 40), "5.0 TiB"},

		{"BytesSI B", BytesSI(512), "512 B"},
		{"BytesSI round to kB", BytesSI(999.6), "1.00 kB"},
		{"BytesSI GB", BytesSI(2e9), "2.00 GB"},

		{"Percent 100", Percent(1), "100 %"},
		{"Percent 12", Percent(0.123), "12 %"},
		{"Percent 1.5", Percent(0.015), "1.5 %"},
		{"Percent 2", Percent(0.02), "2 %"},

		{"PercentOneDecimal 100", PercentOneDecimal(1), "100.0 %"},
		{"PercentOneDecimal 12.3", PercentOneDecimal(0.123), "12.3 %"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
