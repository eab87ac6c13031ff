package procio

import "testing"

func TestField(t *testing.T) {
	const io = "rchar: 4096\nwchar: 123\nsyscr: 2\nsyscw: 1\nread_bytes: 0\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"
	tests := []struct {
		name, field string
		in          string
		want        int64
		ok          bool
	}{
		{"wchar", "wchar", io, 123, true},
		{"rchar, first line", "rchar", io, 4096, true},
		{"a prefix of another name is not it", "write", io, 0, false},
		{"absent", "wchar", "rchar: 1\n", 0, false},
		{"not a number", "wchar", "wchar: x\n", 0, false},
		{"no final newline", "wchar", "wchar: 7", 7, true},
		{"empty (a process being reaped)", "wchar", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ok := Field([]byte(tt.in), tt.field)
			if n != tt.want || ok != tt.ok {
				t.Errorf("Field(%q, %q) = %d, %v; want %d, %v", tt.in, tt.field, n, ok, tt.want, tt.ok)
			}
		})
	}
}
