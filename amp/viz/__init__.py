"""Figures and widgets for the book (matplotlib and ipywidgets are imported lazily)."""
