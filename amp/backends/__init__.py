"""Delta layer: backends that turn (law, n, eps) into certified brackets of
``E[(G_1 + ... + G_n)_+] / n`` (Theorem 4 / Theorem 5) and the one dispatcher."""
