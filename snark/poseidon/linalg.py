"""Small dense linear algebra and polynomials over a prime field (t×t Poseidon matrices).

Matrices are tuples of row tuples of ints; polynomials are lists of coefficients, lowest
degree first. Sizes are tiny, so plain Python is the right tool.
"""

from __future__ import annotations

from collections.abc import Sequence

Matrix = tuple[tuple[int, ...], ...]
Poly = list[int]


# -- matrices -----------------------------------------------------------------------------

def identity(n: int) -> Matrix:
    return tuple(tuple(int(i == j) for j in range(n)) for i in range(n))


def matmul(a: Matrix, b: Matrix, p: int) -> Matrix:
    return tuple(tuple(sum(x * y for x, y in zip(row, col)) % p for col in zip(*b)) for row in a)


def matvec(a: Matrix, v: Sequence[int], p: int) -> tuple[int, ...]:
    return tuple(sum(x * y for x, y in zip(row, v)) % p for row in a)


def matpow(a: Matrix, e: int, p: int) -> Matrix:
    result = identity(len(a))
    for _ in range(e):
        result = matmul(result, a, p)
    return result


def rref(rows: Sequence[Sequence[int]], p: int) -> tuple[list[list[int]], list[int]]:
    """Reduced row echelon form: the non-zero rows and their pivot columns."""
    reduced = [[x % p for x in row] for row in rows]
    pivots: list[int] = []
    width = len(reduced[0]) if reduced else 0
    r = 0
    for col in range(width):
        pivot = next((i for i in range(r, len(reduced)) if reduced[i][col]), None)
        if pivot is None:
            continue
        reduced[r], reduced[pivot] = reduced[pivot], reduced[r]
        inv = pow(reduced[r][col], -1, p)
        reduced[r] = [x * inv % p for x in reduced[r]]
        for i in range(len(reduced)):
            if i != r and reduced[i][col]:
                f = reduced[i][col]
                reduced[i] = [(x - f * y) % p for x, y in zip(reduced[i], reduced[r])]
        pivots.append(col)
        r += 1
    return reduced[:r], pivots


def rank(rows: Sequence[Sequence[int]], p: int) -> int:
    return len(rref(rows, p)[1]) if rows else 0


def kernel(rows: Sequence[Sequence[int]], width: int, p: int) -> list[tuple[int, ...]]:
    """A basis of {v : rows · v = 0} in F^width."""
    reduced, pivots = rref(rows, p) if rows else ([], [])
    basis = []
    for free in (c for c in range(width) if c not in pivots):
        v = [0] * width
        v[free] = 1
        for row, col in zip(reduced, pivots):
            v[col] = -row[free] % p
        basis.append(tuple(v))
    return basis


def inverse(m: Matrix, p: int) -> Matrix:
    n = len(m)
    reduced, pivots = rref([list(row) + list(e) for row, e in zip(m, identity(n))], p)
    if pivots[:n] != list(range(n)):
        raise ValueError("matrix is singular")
    return tuple(tuple(row[n:]) for row in reduced)


def charpoly(a: Matrix, p: int) -> Poly:
    """det(xI − A) by Faddeev–LeVerrier (valid for p > size)."""
    n = len(a)
    coeffs = [0] * n + [1]
    m = tuple((0,) * n for _ in range(n))
    for k in range(1, n + 1):
        m = tuple(tuple((x + coeffs[n - k + 1] * (i == j)) % p for j, x in enumerate(row))
                  for i, row in enumerate(matmul(a, m, p)))
        trace = sum(row[i] for i, row in enumerate(matmul(a, m, p)))
        coeffs[n - k] = -trace * pow(k, -1, p) % p
    return coeffs


# -- polynomials --------------------------------------------------------------------------

def _trim(f: Poly) -> Poly:
    while f and f[-1] == 0:
        f = f[:-1]
    return f


def poly_sub(f: Poly, g: Poly, p: int) -> Poly:
    width = max(len(f), len(g))
    f, g = f + [0] * (width - len(f)), g + [0] * (width - len(g))
    return _trim([(x - y) % p for x, y in zip(f, g)])


def poly_divmod(f: Poly, g: Poly, p: int) -> tuple[Poly, Poly]:
    f, g = _trim(f), _trim(g)
    inv = pow(g[-1], -1, p)
    quotient = [0] * max(len(f) - len(g) + 1, 0)
    remainder = list(f)
    for shift in reversed(range(len(quotient))):
        c = remainder[shift + len(g) - 1] * inv % p
        quotient[shift] = c
        for i, gi in enumerate(g):
            remainder[shift + i] = (remainder[shift + i] - c * gi) % p
    return quotient, _trim(remainder)


def poly_mulmod(f: Poly, g: Poly, modulus: Poly, p: int) -> Poly:
    product = [0] * (len(f) + len(g))
    for i, x in enumerate(f):
        for j, y in enumerate(g):
            product[i + j] = (product[i + j] + x * y) % p
    return poly_divmod(product, modulus, p)[1]


def poly_powmod(f: Poly, e: int, modulus: Poly, p: int) -> Poly:
    result, base = [1], poly_divmod(f, modulus, p)[1]
    for bit in bin(e)[2:]:
        result = poly_mulmod(result, result, modulus, p)
        if bit == "1":
            result = poly_mulmod(result, base, modulus, p)
    return result


def poly_gcd(f: Poly, g: Poly, p: int) -> Poly:
    f, g = _trim(f), _trim(g)
    while g:
        f, g = g, poly_divmod(f, g, p)[1]
    inv = pow(f[-1], -1, p)
    return [x * inv % p for x in f]


def roots(f: Poly, p: int) -> list[int]:
    """The distinct roots of f in F_p (gcd with x^p − x, then Cantor–Zassenhaus splits)."""
    x_to_p = poly_powmod([0, 1], p, f, p)
    return _split(poly_gcd(poly_sub(x_to_p, [0, 1], p), f, p), p)


def _split(g: Poly, p: int) -> list[int]:
    """Roots of a product of distinct monic linear factors."""
    degree = len(g) - 1
    if degree == 0:
        return []
    if degree == 1:
        return [-g[0] * pow(g[1], -1, p) % p]
    for delta in range(1, p):
        h = poly_powmod([delta, 1], (p - 1) // 2, g, p)
        factor = poly_gcd(poly_sub(h, [1], p), g, p)
        if 0 < len(factor) - 1 < degree:
            return _split(factor, p) + _split(poly_divmod(g, factor, p)[0], p)
    raise ArithmeticError("no splitting element found")
