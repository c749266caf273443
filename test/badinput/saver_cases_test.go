package badinput

func saverCases() []hostile { return nil }
