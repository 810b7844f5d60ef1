"""The GIL is released while simulating: a Python thread keeps running during a ~1 s run()."""
import threading
import time

from common import A100, done, expect, gtsim

KERNEL = "kernels_ir/lib/gemm_tiled.kir"
PARAMS = {"M": 1024, "N": 1024, "K": 1024}  # ~1-5 s on 2 cores

ticks = []
stop = threading.Event()


def ticker():
    while not stop.is_set():
        ticks.append(time.monotonic())
        time.sleep(0.002)


t = threading.Thread(target=ticker)
t.start()
time.sleep(0.05)
t0 = time.monotonic()
r = gtsim.run(A100, KERNEL, params=PARAMS)
t1 = time.monotonic()
stop.set()
t.join()
inside = [x for x in ticks if t0 < x < t1]
print(f"run() took {t1 - t0:.2f} s; the other thread ticked {len(inside)} times meanwhile")
expect(r["cycles"] > 0, "the run finished")
expect(t1 - t0 > 0.2, f"the run is long enough to tell ({t1 - t0:.2f} s)")
# with the GIL held the ticker could not run at all inside the window; released, it ticks every ~2 ms
expect(len(inside) >= max(10, 0.2 * (t1 - t0) / 0.002), f"{len(inside)} ticks during the run")
done()
