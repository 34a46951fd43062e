"""Tables from the C++ layer as pandas DataFrames.

The binding hands over each column once: numbers as numpy arrays (no
per-cell Python objects), text as lists. Integer columns with unknown
values use pandas' nullable Int64 dtype, real columns NaN, text None.
"""
import numpy as np
import pandas as pd


def frame(table):
    """DataFrame of a binding table ({"columns", "kinds", "values", "masks"})."""
    data = {}
    for name, kind, values, mask in zip(table["columns"], table["kinds"],
                                        table["values"], table["masks"]):
        if kind == "int" and mask is not None:
            data[name] = pd.arrays.IntegerArray(values, mask)
        elif kind in ("int", "float"):
            data[name] = values
        else:
            data[name] = np.array(values, dtype=object)
    return pd.DataFrame(data, columns=list(table["columns"]))
