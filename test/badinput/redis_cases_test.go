package badinput

func redisCases() []hostile { return nil }
