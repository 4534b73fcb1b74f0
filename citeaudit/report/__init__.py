"""Report: what one date × codebook looks like to a reader. One self-contained HTML page per
date × codebook (``report/observation_date=D/codebook=V/index.html``), and the headline and
summary the command line prints from the same numbers.
"""
