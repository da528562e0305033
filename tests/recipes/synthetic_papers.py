"""Three small invented papers in styles the bundled papers do not use (fixtures, not data).

A clinical-epidemiology article (IMRaD with "Materials and methods", "Study population",
"Statistical analysis"), a materials-chemistry letter ("Theory", "Apparatus", "Measurements")
and a public-economics working paper ("Institutional setting", "Identification", "Data").
They carry what the offline baseline must clean up: citations as subjects and asides,
cross-references, first person, discourse openers and a self-describing system sentence.
"""

from __future__ import annotations

EPIDEMIOLOGY = r"""\documentclass{article}
\title{Household Crowding and Respiratory Infection in Early Childhood}
\begin{document}
\maketitle
\begin{abstract}
Respiratory infections remain a leading cause of hospital admission in early childhood.
Household crowding is thought to raise transmission, but its separate role is hard to isolate
from income and parental smoking. We link birth records to hospital data to estimate it.
\end{abstract}
\section{Introduction}
Respiratory infections remain a leading cause of hospital admission among young children in
many regions \cite{who}. Crowded homes are believed to raise transmission between siblings,
yet crowding is strongly correlated with low income and with parental smoking \cite{a,b}.
As \citet{c} point out, most cohort studies cannot separate these exposures because they
measure crowding only once. Little is known about how changes in crowding over the first
years of life relate to admissions. The tool defines a registry linkage protocol for linking
birth and hospital records.
In this paper, we study a linked cohort of children followed from birth.
\section{Materials and methods}
\subsection{Study population}
We linked birth registrations to hospital discharge records using a deterministic matching
procedure described in Section~\ref{sec:link}. In summary, we retained children whose mothers
were resident in the region at delivery and who could be followed until school entry.
Finally, we excluded children with congenital heart disease, because their admissions follow
a different clinical pathway \cite{d}.
\subsection{Exposure definition}
Our exposure measure is the number of residents per bedroom, recorded at each annual
household survey. Second, we classify a household as crowded when that ratio exceeds the
national housing standard. We treat crowding as a time-varying exposure rather than a fixed
baseline characteristic.
\subsection{Statistical analysis}
We estimate hazard ratios with a Cox model stratified by birth cohort and adjusted for
maternal education, household income and parental smoking (see Table~\ref{tab:cov}).
Moreover, we use inverse probability weights to account for families who leave the region
before school entry. We assess robustness by repeating the analysis among siblings, which
removes confounding by stable family characteristics \citep{e}.
\section{Results}
Crowded households had higher admission rates in every birth cohort.
\section{Discussion}
We find that crowding matters.
\section{Acknowledgements}
We thank the registry staff.
\end{document}
"""

MATERIALS = r"""\documentclass{article}
\title{Low-Temperature Synthesis of Porous Catalyst Films}
\begin{document}
\maketitle
\begin{abstract}
Porous oxide films catalyse many oxidation reactions, but common routes to them need high
annealing temperatures that damage polymer substrates. Deposition at low temperature usually
yields dense films with little accessible surface.
\end{abstract}
\section{Introduction}
Porous oxide films are widely used as catalysts for oxidation reactions in chemical sensing
and energy conversion \cite{x1}. Conventional sol-gel routes reach high porosity only after
annealing at temperatures that flexible polymer substrates cannot tolerate \cite{x2,x3}.
Template-free deposition at room temperature typically produces dense films whose active
surface is small. Whether porosity can be controlled without any thermal step therefore
remains an open question.
\section{Theory}
The growth of a porous film is governed by the balance between precursor adsorption and
surface diffusion. Also, we model this balance with a kinetic description in which adsorbed
precursors either diffuse to existing clusters or nucleate new ones.
In other words, a slow diffusion rate favours nucleation and therefore an open, porous
structure. We derive the expected pore size from the ratio of the deposition flux to the
diffusion coefficient, following the scaling argument of \cite{x4}.
\section{Apparatus}
The films are grown in a custom vacuum chamber equipped with a pulsed precursor inlet and a
cooled substrate stage. We control the deposition flux by changing the pulse length, and we
keep the substrate near room temperature throughout the growth.
\section{Measurements}
We characterise the porosity of each film by nitrogen adsorption and by cross-sectional
electron microscopy (Fig.~\ref{fig:sem}). The catalytic activity is measured in a flow
reactor by following the oxidation of carbon monoxide as a function of temperature.
Furthermore, we compare the films with reference films prepared by the conventional annealed
sol-gel route on glass substrates.
\section{Conclusions}
We showed that porous films can be grown cold.
\end{document}
"""

ECONOMICS = r"""\documentclass{article}
\title{Do Property Tax Caps Shift School Funding?}
\begin{document}
\maketitle
\begin{abstract}
Many states cap the growth of local property taxes. Such caps may shift school funding from
local to state sources and widen gaps between districts, but the evidence is mixed.
\end{abstract}
\section{Introduction}
Local property taxes are the main source of school funding in many countries \cite{p1}.
Tax limitation measures restrict how fast these revenues may grow, and their effects on
spending depend on how state governments respond \cite{p2}. Prior studies compare districts
before and after the caps, but the timing of adoption is rarely random. It is therefore unclear
whether caps reduce spending or merely change who pays for schools.
\section{Institutional setting}
Caps were adopted by referendum in different years across states, often after sharp rises in
assessed home values \cite{p3}.
\section{Identification}
We exploit the staggered adoption of caps across states in an event-study design. First, we
compare districts in adopting states with districts in states that adopt later, so that every
comparison group is eventually treated. I allow the effect to differ by the district's
initial reliance on local revenue, since caps bind more where local taxes fund a larger share.
To this end, we estimate the dynamic effects with an estimator that is robust to heterogeneous
treatment effects across adoption cohorts \citep{p4}.
\section{Data}
We assemble district finance records from the annual survey of school system finances and
match them to referendum dates collected from state election archives. Our outcome variables
are local revenue, state aid and total current spending per pupil (Table~\ref{tab:sum}).
\section{Robustness}
We repeat the analysis excluding districts that were consolidated during the sample period.
Additionally, we test for anticipation by allowing effects in the years before adoption.
\section{Conclusion}
In summary, caps shift funding.
\end{document}
"""

PAPERS: dict[str, str] = {
    "epidemiology": EPIDEMIOLOGY,
    "materials": MATERIALS,
    "economics": ECONOMICS,
}
