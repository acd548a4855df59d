# Real data: download (verified, atomic, with manifests; optionally from a mirror) and prepare
# the Intel temperature and EPA ozone fields. Uses config["data"] only (the `data:` section of
# workflow/schemas/config.schema.yaml; every key has a default). All work is done by
# `tvbo data ...` (tvbo/data/__main__.py); the package must be installed.
# Simulations of real-data benchmarks depend on these outputs (common.smk: benchmark_data_file),
# so they are built on demand; `snakemake data_all` builds every configured field.
#
# Outputs
#   data/raw/intel/data.txt.gz, data/raw/intel/mote_locs.txt     (+ .manifest.json each)
#   data/raw/ozone/daily_44201_{year}.zip                         (+ .manifest.json), per year
#   data/intel/intel_{date}.nc       one (time, sensor) field per configured day
#   data/ozone/ozone_{tag}.nc        the (site, day) field of the configured years and region
#   data/logs/*.log
# With a mirror, the raw files keep these names (the manifest records the URL fetched), and a
# change of url/mirror/checksum re-runs the download (Snakemake's params trigger).


rule data_download_intel:
    output:
        data="data/raw/intel/data.txt.gz",
        manifest="data/raw/intel/data.txt.gz.manifest.json",
    log:
        "data/logs/download_intel.log",
    conda:
        "../../environment.yml"
    params:
        url=config["data"]["intel"]["url"],
        sha256=config["data"]["intel"]["sha256"],
        size=config["data"]["intel"]["size"],
        mirror=config["data"]["mirror"],
        mirror_files=config["data"]["mirror_files"],
        timeout=config["data"]["timeout"],
        retries=config["data"]["retries"],
    shell:
        "tvbo data download --url {params.url:q} --dest {output.data:q}"
        " --sha256 {params.sha256} --size {params.size} --mirror {params.mirror:q}"
        " --mirror-files {params.mirror_files:q} --timeout {params.timeout}"
        " --retries {params.retries} > {log:q} 2>&1"


rule data_download_intel_locs:
    output:
        locs="data/raw/intel/mote_locs.txt",
        manifest="data/raw/intel/mote_locs.txt.manifest.json",
    log:
        "data/logs/download_intel_locs.log",
    conda:
        "../../environment.yml"
    params:
        url=config["data"]["intel"]["locs_url"],
        sha256=config["data"]["intel"]["locs_sha256"],
        size=config["data"]["intel"]["locs_size"],
        mirror=config["data"]["mirror"],
        mirror_files=config["data"]["mirror_files"],
        timeout=config["data"]["timeout"],
        retries=config["data"]["retries"],
    shell:
        "tvbo data download --url {params.url:q} --dest {output.locs:q}"
        " --sha256 {params.sha256} --size {params.size} --mirror {params.mirror:q}"
        " --mirror-files {params.mirror_files:q} --timeout {params.timeout}"
        " --retries {params.retries} > {log:q} 2>&1"


rule data_download_ozone:
    output:
        zip="data/raw/ozone/daily_44201_{year}.zip",
        manifest="data/raw/ozone/daily_44201_{year}.zip.manifest.json",
    log:
        "data/logs/download_ozone_{year}.log",
    wildcard_constraints:
        year=r"\d{4}",
    conda:
        "../../environment.yml"
    params:
        # Snakemake formats string params with the wildcards: "{year}" becomes the year here.
        url=config["data"]["ozone"]["url_template"],
        mirror=config["data"]["mirror"],
        mirror_files=config["data"]["mirror_files"],
        timeout=config["data"]["timeout"],
        retries=config["data"]["retries"],
    shell:
        "tvbo data download --url {params.url:q}"
        " --year {wildcards.year} --dest {output.zip:q} --mirror {params.mirror:q}"
        " --mirror-files {params.mirror_files:q} --timeout {params.timeout}"
        " --retries {params.retries} > {log:q} 2>&1"


rule data_prepare_intel:
    input:
        data="data/raw/intel/data.txt.gz",
        locs="data/raw/intel/mote_locs.txt",
    output:
        "data/intel/intel_{date}.nc",
    log:
        "data/logs/prepare_intel_{date}.log",
    wildcard_constraints:
        date=r"\d{4}-\d{2}-\d{2}",
    conda:
        "../../environment.yml"
    params:
        bin_minutes=config["data"]["intel"]["bin_minutes"],
        coverage=config["data"]["intel"]["coverage"],
        temperature_range=config["data"]["intel"]["temperature_range"],
        normalise=config["data"]["intel"]["normalise"],
    shell:
        "tvbo data prepare-intel --data {input.data:q} --locs {input.locs:q}"
        " --dates {wildcards.date} --bin-minutes {params.bin_minutes}"
        " --coverage {params.coverage} --temperature-range {params.temperature_range}"
        " --normalise {params.normalise} --out {output:q} > {log:q} 2>&1"


rule data_prepare_ozone:
    input:
        expand("data/raw/ozone/daily_44201_{year}.zip", year=config["data"]["ozone"]["years"]),
    output:
        expand("data/ozone/ozone_{tag}.nc", tag=config["data"]["ozone"]["tag"]),
    log:
        expand("data/logs/prepare_ozone_{tag}.log", tag=config["data"]["ozone"]["tag"]),
    conda:
        "../../environment.yml"
    params:
        years=config["data"]["ozone"]["years"],
        cbsa=config["data"]["ozone"]["cbsa"],
        bbox=config["data"]["ozone"]["bbox"],
        coverage=config["data"]["ozone"]["coverage"],
        max_sites=config["data"]["ozone"]["max_sites"],
        standards=config["data"]["ozone"]["standards"],
        event_types=config["data"]["ozone"]["event_types"],
        poc=config["data"]["ozone"]["poc"],
        fill=config["data"]["ozone"]["fill"],
        start=config["data"]["ozone"]["start"],
        end=config["data"]["ozone"]["end"],
    shell:
        "tvbo data prepare-ozone --inputs {input:q} --years {params.years}"
        " --cbsa {params.cbsa:q} --bbox {params.bbox} --coverage {params.coverage}"
        " --max-sites {params.max_sites} --standards {params.standards:q}"
        " --event-types {params.event_types:q} --poc {params.poc} --fill {params.fill}"
        " --start {params.start} --end {params.end} --out {output:q} > {log:q} 2>&1"


rule data_all:
    input:
        data_targets(),
