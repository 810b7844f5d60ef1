"""Executes a notebook headless with nbclient (Debian's python3-nbclient) and fails on any cell error
or when it takes over 60 s. Exit 77 (ctest: skipped) when nbclient, nbformat, ipykernel or matplotlib
is missing. Usage: run_notebook.py NOTEBOOK.ipynb [--write] (--write saves the outputs into the file:
how the checked-in notebook's plots are regenerated)."""
import os
import sys
import time

try:
    import ipykernel  # noqa: F401
    import matplotlib  # noqa: F401
    import nbclient
    import nbformat
except ImportError as e:
    print(f"skipped: {e} (Debian: python3-nbclient python3-nbformat python3-ipykernel python3-matplotlib)")
    sys.exit(77)

os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # quiets ipykernel's debugger warnings
path = os.path.abspath(sys.argv[1])
nb = nbformat.read(path, as_version=4)
t0 = time.monotonic()
client = nbclient.NotebookClient(nb, timeout=60, kernel_name="python3",
                                 resources={"metadata": {"path": os.path.dirname(path)}})
client.execute()
elapsed = time.monotonic() - t0
images = sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             if "image/png" in o.get("data", {}))
print(f"{os.path.basename(path)}: {len(nb.cells)} cells in {elapsed:.1f} s, {images} inline plots")
if images < 2:
    sys.exit("expected at least two inline plots")
if "--write" in sys.argv[2:]:
    nbformat.write(nb, path)
if elapsed > 60:
    sys.exit(f"took {elapsed:.1f} s (over 60 s)")
