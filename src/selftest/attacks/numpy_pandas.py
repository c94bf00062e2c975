# Allowed: the scientific stack imports and works.
import numpy as np
import pandas as pd

df = pd.DataFrame({"x": np.arange(5)})
total = int(df["x"].sum())
print(("OK: " if total == 10 else "FAIL: ") + "numpy %s, pandas %s, sum %d" % (np.__version__, pd.__version__, total))
