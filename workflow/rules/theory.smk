# BOLT's theory figures, the same for every campaign (they need no run and take seconds): the n*
# curves ([A] Fig. 2 / [B] Fig. 1), the lower-bound slope eps_c vs sampling frequency ([A]
# Fig. 1) and the upper bounds vs the maximal dataset size, with a CSV of every plotted number
# (tvbo/analysis/theory_figures.py). In the report under the campaign's name, subcategory Theory.


rule theory_figures:
    output:
        nstar=report(
            f"results/{{campaign}}/theory/nstar_curves.{FIGURE_EXT}",
            caption="../report/theory_nstar_curves.rst",
            category=CAMPAIGN,
            subcategory="Theory",
            labels={"figure": "n* curves"},
        ),
        eps_c=report(
            f"results/{{campaign}}/theory/eps_c_vs_frequency.{FIGURE_EXT}",
            caption="../report/theory_eps_c.rst",
            category=CAMPAIGN,
            subcategory="Theory",
            labels={"figure": "eps_c vs sampling frequency"},
        ),
        bounds=report(
            f"results/{{campaign}}/theory/upper_bounds_vs_n.{FIGURE_EXT}",
            caption="../report/theory_upper_bounds.rst",
            category=CAMPAIGN,
            subcategory="Theory",
            labels={"figure": "upper bounds vs n"},
        ),
        data=report(
            "results/{campaign}/theory/theory_data.csv",
            caption="../report/theory_data.rst",
            category=CAMPAIGN,
            subcategory="Theory",
            labels={"figure": "plotted numbers (CSV)"},
        ),
    log:
        "results/{campaign}/logs/theory_figures.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=1000,
    params:
        figure_args=FIGURE_ARGS,
    shell:
        'MPLBACKEND=Agg tvbo theory --outdir "$(dirname {output.data:q})" {params.figure_args} > {log:q} 2>&1'
