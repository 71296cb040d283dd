"""Sphinx configuration for dptoolkit.

Build (warnings are errors, as in CI)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The build needs no network: intersphinx is not enabled (its inventories would be
downloaded), and the gallery examples use small synthetic or local data only.
"""
import os
import sys
from pathlib import Path

# Import the package from the working tree when it is not installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dptoolkit  # noqa: E402

# Gallery examples that read real data find it through DPTOOLKIT_DATA; the default
# ``../shared/data`` is relative to the current directory, so pin it to the repo
# root's sibling when the variable is unset (sphinx may be run from anywhere).
os.environ.setdefault(
    "DPTOOLKIT_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data")
)

# -- Project ---------------------------------------------------------------
project = "dptoolkit"
author = "the dptoolkit developers"
copyright = "2025, the dptoolkit developers"
version = dptoolkit.__version__
release = dptoolkit.__version__

# -- General ---------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
# examples/ holds the gallery sources (read by sphinx-gallery, not by Sphinx).
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "examples"]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
language = "en"

# Every cross-reference must resolve (the build runs with -W).  Without
# intersphinx (offline build) the targets of other projects cannot resolve;
# those, and only those, are ignored: the packages dptoolkit builds on.
nitpicky = True
_EXTERNAL = ("numpy", "scipy", "sklearn", "dask", "distributed", "joblib", "skops",
             "mpi4py", "matplotlib", "dp_accounting", "pandas")
nitpick_ignore_regex = [
    (r"py:.*", rf"({'|'.join(_EXTERNAL)})(\..*)?"),
]

# -- autodoc / autosummary ---------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"

# -- numpydoc ----------------------------------------------------------------
# Class members are listed by autosummary in the API page; numpydoc's own member
# tables would duplicate them and warn for every inherited sklearn method.
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
# Docstring validation is done by the test suite / reviewers, not by the build.
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True

# -- intersphinx ---------------------------------------------------------------
# Deliberately not enabled: the mappings would be downloaded at build time and the
# build must work offline.  To enable, add "sphinx.ext.intersphinx" above and an
# ``intersphinx_mapping`` pointing at local objects.inv files.

# -- sphinx-gallery --------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    # An example that fails makes the build fail at its end (all failures are
    # listed, not only the first).
    "abort_on_example_error": False,
    "plot_gallery": "True",
    # Back-references power the ``minigallery`` directive in the class template.
    "backreferences_dir": "gen_modules/backreferences",
    "doc_module": ("dptoolkit",),
    "reference_url": {"dptoolkit": None},
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "show_memory": False,
}

# -- HTML ----------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"dptoolkit {release}"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False


# -- Hooks -----------------------------------------------------------------------
def _skip_sklearn_members(app, what, name, obj, skip, options):
    """Skip members that scikit-learn defines (get_params, score, set_*_request...).

    The class template lists inherited members, but the ones inherited from
    scikit-learn are documented there, and their docstrings point at sklearn's
    glossary and labels, which cannot resolve in this build (no intersphinx).
    """
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and (module == "sklearn" or module.startswith("sklearn.")):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_members)
