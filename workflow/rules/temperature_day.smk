# The Intel day the Temperature benchmarks read, against the papers' day, for the report
# (caption workflow/report/temperature_day.rst). Requested by final_outputs (common.smk) only
# when the grid has an Intel benchmark.


rule temperature_day:
    output:
        table=report(
            "results/{campaign}/tables/temperature_day.csv",
            caption="../report/temperature_day.rst",
            category=CAMPAIGN,
            subcategory="Configuration",
        ),
    log:
        "results/{campaign}/logs/temperature_day.log",
    localrule: True
    params:
        rows=temperature_day_rows(),
    run:
        write_temperature_day(output.table, log[0], params.rows)
