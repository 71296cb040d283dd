"""Fit every saved-model type of dptoolkit at commit 49bd14a on tiny data and save it."""
import sys, warnings
import numpy as np
import scipy.sparse as sp
warnings.simplefilter("ignore")
from dptoolkit._persistence import save_model
from dptoolkit.linear_model import (FrankWolfeLassoClassifier, SparsifiedLassoClassifier, DPSGDClassifier,
    DPSGDRegressor, DPSCDClassifier, DPSCDRegressor, DPIGHTClassifier, DPNBLogisticClassifier)
out = sys.argv[1]
rng = np.random.default_rng(0)
X = sp.random(200, 30, density=0.2, random_state=0, format="csr"); X.data[:] = 1.0
y = (np.asarray(X[:, :5].sum(axis=1)).ravel() > 1).astype(int)
yr = np.asarray(X[:, :5].sum(axis=1)).ravel()
pub = dict(epsilon=1.0, n_samples_public=200)
ests = {
 "frank_wolfe": FrankWolfeLassoClassifier(**pub, delta=1e-5, classes=[0, 1], max_iter=20, random_state=0),
 "frank_wolfe_multinomial": FrankWolfeLassoClassifier(**pub, delta=1e-5, classes=[0, 1, 2], max_iter=20, random_state=0),
 "sparsifier": SparsifiedLassoClassifier(**pub, classes=[0, 1], random_state=0),
 "dpsgd_classifier": DPSGDClassifier(**pub, delta=1e-5, classes=[0, 1], random_state=0),
 "dpsgd_regressor": DPSGDRegressor(**pub, delta=1e-5, random_state=0),
 "dpscd_classifier": DPSCDClassifier(**pub, delta=1e-5, classes=[0, 1], random_state=0),
 "dpscd_regressor": DPSCDRegressor(**pub, delta=1e-5, random_state=0),
 "dpight": DPIGHTClassifier(**pub, delta=1e-5, classes=[0, 1], random_state=0),
 "dpnb_logistic": DPNBLogisticClassifier(**pub, delta=1e-5, classes=[0, 1], random_state=0),
}
y3 = (np.asarray(X[:, :5].sum(axis=1)).ravel()).astype(int) % 3
for name, est in ests.items():
    yy = yr if "regressor" in name else (y3 if "multinomial" in name else y)
    est.fit(X, yy)
    save_model(est, f"{out}/{name}.skops")
    np.save(f"{out}/{name}.predictions.npy", est.predict(X[:20]))
    print(name, "ok")
np.save(f"{out}/X20.npy", X[:20].toarray())
