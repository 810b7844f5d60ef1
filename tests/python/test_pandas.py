"""With pandas importable, sweep returns a DataFrame holding the same numbers as as_frame=False (the
list of dicts). Exit 77 (skipped) without pandas (Debian: python3-pandas)."""
import sys

try:
    import pandas
except ImportError:
    print("skipped: no pandas (Debian: python3-pandas)")
    sys.exit(77)

from common import A100, GEMM, done, expect, gtsim  # noqa: E402

params = {"M,N,K": range(256, 769, 256)}
rows = gtsim.sweep(A100, kernel=GEMM, params=params, as_frame=False)
frame = gtsim.sweep(A100, kernel=GEMM, params=params)
expect(isinstance(frame, pandas.DataFrame), f"sweep returns a DataFrame ({type(frame).__name__})")
expect(len(frame) == len(rows) == 3, f"3 rows each ({len(frame)}, {len(rows)})")
expect(list(frame.columns) == list(rows[0].keys()), "the same columns in the same order")
expect(frame.to_dict("records") == rows, "the same values, row by row")
expect(isinstance(gtsim.sweep(A100, kernel=GEMM, params=params, as_frame=True), pandas.DataFrame),
       "as_frame=True: a DataFrame")
done()
