"""Hand-written material for the prefilter's text-kind corpora (:mod:`prefilter_corpora`).

E-mail messages and web pages written for these tests (the prefilter was never tuned on them),
and the pieces the junk of every kind is made of: menu entries, link titles, boilerplate
notices, table headings. Prose is kept one paragraph per string; the corpora give it the shape
of each kind of text (hard-wrapped, one paragraph a line, quoted, Markdown).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Message:
    sender: str
    subject: str
    paragraphs: tuple[str, ...]
    signature: tuple[str, ...] = ()


MESSAGES = (
    Message(
        "Maria Lopez <maria.lopez@example.org>",
        "Re: moving the steering committee meeting",
        (
            "Hi Tom,",
            "Thanks for flagging the clash with the budget review. I checked with the other "
            "members of the committee and Thursday the 14th at 10:00 works for everyone except "
            "Priya, who can join for the second hour. Since the first hour is mostly the update "
            "on the migration, I think that is fine, and she has already read the draft.",
            "Could you book the large meeting room on the third floor? The small one has no "
            "working projector since the move, and we will need to show the timeline. If the "
            "room is taken, the library seminar room is a reasonable second choice, although "
            "it is further away for the people coming from the other building.",
            "I will send the agenda and the two papers by Monday evening, so that people have "
            "a few days to read them before the meeting.",
            "Best,\nMaria",
        ),
        ("Maria Lopez", "Head of Research Operations", "Tel. +34 91 555 0199"),
    ),
    Message(
        "Tom Becker <t.becker@example.org>",
        "moving the steering committee meeting",
        (
            "Dear all,",
            "The steering committee meeting planned for Tuesday the 12th clashes with the "
            "annual budget review, which several of us have to attend. I would like to move it "
            "to later in the same week, if that is possible for everyone.",
            "Please tell me by Friday which of Wednesday afternoon or Thursday morning suits "
            "you better. The meeting will take about two hours, and the main point is the "
            "decision on whether to migrate the storage cluster this year or next.",
            "Kind regards,\nTom",
        ),
    ),
    Message(
        "Jonas Keller <jkeller@lists.example.net>",
        "Re: [dev] memory growth when reading large parquet files",
        (
            "On the memory growth you reported: I can reproduce it with the file you shared. "
            "The reader keeps a reference to every record batch it has yielded, because the "
            "cache of decoded dictionaries is keyed by the batch object. Once a file has more "
            "than a few hundred row groups, that cache holds most of the file in memory.",
            "A simple fix is to key the cache by the column and the row group number instead "
            "of the batch, and to clear it whenever the reader moves to the next row group. I "
            "tried this locally and the peak memory for your file went from about 9 GB to "
            "300 MB, with no change in the reading time.",
            "I will open a pull request tomorrow with the change and a regression test that "
            "reads a generated file with a thousand small row groups. If someone who knows the "
            "dictionary code better has a reason why the cache was keyed this way, please say "
            "so before I do.",
            "Jonas",
        ),
        ("Jonas Keller", "https://example.net/~jkeller"),
    ),
    Message(
        "Anna Novak <anna.novak@example.com>",
        "Leaking tap in the kitchen, flat 4B",
        (
            "Dear Mr Harris,",
            "I am writing about the kitchen tap in flat 4B, which has been leaking for about "
            "two weeks. At first it was only a slow drip, but since last weekend water also "
            "comes out around the base of the tap whenever it is turned on, and the cupboard "
            "underneath is getting damp.",
            "I have put a bowl under the pipe and I turn the water off at the valve at night, "
            "but I am worried that the wooden floor of the cupboard will start to rot. Could you "
            "arrange for a plumber to come and look at it? I work from home on Tuesdays and "
            "Wednesdays, so either day would be easiest for me, but I can also leave a key with "
            "the neighbour in 4A if another day is better for the plumber.",
            "Thank you in advance, and please let me know if you need photos of the damage.",
            "Yours sincerely,\nAnna Novak",
        ),
    ),
    Message(
        "Priya Raman <priya.raman@example.edu>",
        "Comments on the draft of chapter 3",
        (
            "Hi Sam,",
            "I have read the new draft of chapter 3 and it reads much better than the last "
            "version. The motivation in the first section is now clear, and moving the proof "
            "of the main lemma to the appendix was the right call.",
            "My main concern is the evaluation. You compare against the two baselines only on "
            "the synthetic data, and a reader will ask how the method behaves on the survey "
            "data from chapter 2. Even a small experiment there, with the caveats stated "
            "openly, would make the chapter much stronger. I would also report the variance "
            "over the random seeds and not only the mean, since some of the differences in "
            "table 3 are small.",
            "Smaller points: the notation for the weights changes between sections 3.2 and "
            "3.4, and figure 5 has no label on the vertical axis. I have marked a few typos in "
            "the attached PDF.",
            "Happy to talk about it on Thursday if that helps.",
            "Priya",
        ),
        ("Dr Priya Raman", "Department of Statistics", "University of Example"),
    ),
    Message(
        "Support <support@example-hosting.com>",
        "Your ticket #48213: website unreachable after the DNS change",
        (
            "Hello,",
            "Thank you for contacting us about your website being unreachable after you "
            "changed the DNS records on Monday. We have looked at the configuration of your "
            "domain and found that the new A record points to the address of your old server, "
            "which was shut down at the end of last month.",
            "To fix this, log in to the control panel, open the DNS settings of the domain and "
            "replace the address in the A record with the one shown on the overview page of "
            "your new server. Changes usually take effect within an hour, although some "
            "providers keep the old record in their cache for up to a day.",
            "If the site is still unreachable tomorrow, reply to this message and we will "
            "check the records again together with you.",
            "Best regards,\nDaniel from the support team",
        ),
    ),
    Message(
        "Lena Fischer <lena.fischer@example.de>",
        "Re: question about assignment 2",
        (
            "Dear Professor Ito,",
            "Thank you for the quick answer. I understand now that the second part of the "
            "assignment asks for the estimate of the variance, not the standard error, and I "
            "have corrected my derivation.",
            "I still have one question about the simulation. The assignment says to use a "
            "sample size of 50, but the data set we were given has 48 observations after "
            "removing the missing values. Should we simulate samples of 50 anyway, or use 48 "
            "so that the simulation matches the data? I could not find anything about this in "
            "the lecture notes, and a few other students are unsure as well.",
            "Kind regards,\nLena Fischer",
        ),
    ),
    Message(
        "Kenji Ito <ito@example.ac.jp>",
        "Re: question about assignment 2",
        (
            "Dear Lena,",
            "Good question. Use 48, so that the simulated samples have the same size as the "
            "data you analyse; the 50 in the text of the assignment was written before we "
            "removed the incomplete records. I will post a note on the course page so that "
            "everybody uses the same number, and nobody will lose marks for having used 50.",
            "Best wishes,\nKenji Ito",
        ),
    ),
    Message(
        "Olga Petrova <olga@example-studio.com>",
        "Invoice 2023-117 and the extra revisions",
        (
            "Hello Mark,",
            "Attached is the invoice for the illustrations of the spring catalogue. As we "
            "discussed on the phone, it includes the twelve drawings of the original order and "
            "the two extra rounds of revisions on the cover, which were not part of the quote.",
            "The revisions are charged at the hourly rate in our contract, and I have listed "
            "the hours for each round on the second page. If your finance team needs the "
            "revisions on a separate invoice, tell me and I will split it; it is no trouble.",
            "Payment is due within thirty days. Thank you again for the work, it was a pleasure "
            "to do the catalogue with you.",
            "Olga",
        ),
        ("Olga Petrova | Illustration & Design", "example-studio.com"),
    ),
    Message(
        "Ravi Menon <ravi.menon@example.org>",
        "Re: [infra] proposal: retire the old build machines",
        (
            "I agree with retiring the two oldest build machines, but I would wait until the "
            "release is out. Both of them still run the nightly tests for the 2.x branch, and "
            "moving those jobs now means changing the pipeline in the middle of the freeze.",
            "After the release we could move the 2.x jobs to the new pool in one afternoon. The "
            "only real work is the image with the old compiler, which we need because the 2.x "
            "branch does not build with the current one. I can prepare that image next week so "
            "that it is ready when we switch.",
            "If we do it this way, the machines can be switched off at the end of the month, "
            "which is also when their support contract ends.",
            "Ravi",
        ),
    ),
    Message(
        "Claire Dubois <claire.dubois@example.fr>",
        "Change to the travel plans for the workshop",
        (
            "Hi everyone,",
            "A quick update on the travel plans for the workshop in Lyon. The train on Sunday "
            "afternoon has been cancelled because of works on the line, so the travel agency "
            "has rebooked all of us on the morning train, which leaves at 9:12 and arrives "
            "shortly after one o'clock.",
            "The hotel has agreed to let us check in early, so you can leave your luggage there "
            "before lunch. The first session still starts on Monday at nine, and the dinner on "
            "Monday evening is unchanged.",
            "New tickets have been sent to each of you by e-mail. If you have not received "
            "yours, or if the morning train does not work for you, please tell me by Wednesday.",
            "Thanks,\nClaire",
        ),
    ),
    Message(
        "Sam Okafor <sam.okafor@example.edu>",
        "Request for a reference letter",
        (
            "Dear Dr Raman,",
            "I am applying for the summer research programme at the Institute for Applied "
            "Statistics, and the application asks for one letter from a supervisor. Since I "
            "worked with you on the survey weighting project last year, I wondered whether you "
            "would be willing to write one for me.",
            "The deadline for the letters is the 30th of next month. The programme focuses on "
            "small area estimation, so the letter could mention the work on the model for the "
            "regional estimates, which was the part I was most involved in. I attach my CV and "
            "the description of the programme in case they are useful.",
            "I understand if you do not have the time, and thank you for considering it.",
            "Best regards,\nSam Okafor",
        ),
    ),
)
"""E-mail messages; :func:`prefilter_corpora.email_corpus` threads them with quoted replies."""

DISCLAIMER = (
    "This e-mail and any attachments are confidential and intended solely for the addressee. "
    "If you have received it in error, please notify the sender and delete it. Any views "
    "expressed are those of the author and do not necessarily represent those of the company."
)

WEB_PAGES = (
    (
        "How to repot a houseplant without stressing it",
        "Posted on 3 March 2022 by Helen",
        (
            "Most houseplants need a bigger pot every one to two years, when the roots start "
            "to circle the inside of the pot or grow out of the drainage holes. Spring is the "
            "best time, because the plant is starting to grow again and recovers quickly.",
            "Choose a pot only two or three centimetres wider than the old one. A much larger "
            "pot holds more wet soil than the roots can use, and the soil stays damp for too "
            "long, which is the most common cause of root rot.",
            "Water the plant the day before, so the root ball slides out in one piece. Tip the "
            "pot on its side, support the base of the stems with one hand and ease the plant "
            "out. If the roots are tightly wound, loosen the outer ones gently with your "
            "fingers.",
            "Put a layer of fresh potting mix in the new pot, set the plant at the same depth "
            "as before and fill the sides, pressing lightly. Water it well and keep it out of "
            "direct sun for a week while the roots settle.",
        ),
        ("Share this:", "Facebook", "Twitter", "Related posts", "3 comments"),
    ),
    (
        "City council approves new cycle lanes on the ring road",
        "By James Porter | 14 June 2023 | 4 min read",
        (
            "The city council voted on Tuesday to build protected cycle lanes along the "
            "northern half of the ring road, after a debate that lasted most of the evening. "
            "The plan passed by 31 votes to 19.",
            "The lanes will be separated from the traffic by a low concrete kerb, and the "
            "parking spaces on that side of the road will be removed. The council says the "
            "work will start in September and take about eight months.",
            "Supporters of the plan pointed to the number of accidents involving cyclists on "
            "the ring road, which has doubled in five years. Shop owners along the road "
            "opposed it, saying that the loss of parking would keep customers away.",
            "The council has promised a review of the traffic after the first year, and says "
            "it will consider adding short-stay parking in the side streets if the shops are "
            "affected.",
        ),
        ("Read more:", "Bus fares to rise in January", "Advertisement"),
    ),
    (
        "Review: a budget mechanical keyboard that gets the basics right",
        "Rating: 4 out of 5",
        (
            "Cheap mechanical keyboards often cut corners where it matters: wobbly keys, a "
            "flexing case and software that barely works. This one avoids most of those "
            "problems, and at its price that is a pleasant surprise.",
            "The case is plastic but stiff, and the keyboard does not move on the desk thanks "
            "to four wide rubber feet. The switches are hot-swappable, so a broken one can be "
            "replaced in a minute without soldering, and you can try other switches later.",
            "Typing feels consistent across the board. The larger keys, such as the space bar "
            "and the shift keys, have a slight rattle, which is common at this price and "
            "mostly disappears with a little lubricant on the stabilisers.",
            "The weak point is the software: it only runs on Windows and offers little beyond "
            "the lighting effects. If you do not care about lighting, you will never need it.",
        ),
        ("Pros: solid case, hot-swappable switches", "Cons: rattling stabilisers", "Buy now"),
    ),
    (
        "Slow-cooked lentil soup",
        "Serves 4 | Preparation 15 minutes | Cooking 6 hours",
        (
            "This soup is one of the easiest meals to make on a busy day: everything goes into "
            "the slow cooker in the morning, and it is ready in the evening with no stirring.",
            "Rinse the lentils in a sieve until the water runs clear, and pick out any small "
            "stones. Chop the onion, carrots and celery into small pieces of about the same "
            "size, so that they cook evenly.",
            "Put the vegetables, the lentils, the tomatoes and the spices in the slow cooker, "
            "pour in the stock and stir once. Cook on low for six hours, until the lentils are "
            "soft and starting to fall apart.",
            "Season with salt and a squeeze of lemon just before serving. The soup keeps for "
            "three days in the fridge and freezes well, although it thickens as it cools, so "
            "add a little water when you heat it again.",
        ),
        ("Ingredients", "250 g red lentils", "1 onion", "2 carrots", "Print recipe"),
    ),
    (
        "What to do if your flight is cancelled",
        "Updated 2 August 2023",
        (
            "If your flight is cancelled, the airline must offer you a choice between a refund "
            "and another flight to your destination, either as soon as possible or at a later "
            "date that suits you.",
            "While you wait for the new flight, the airline must also provide meals and "
            "drinks in proportion to the waiting time, and a hotel room if you have to stay "
            "overnight, together with the transport between the airport and the hotel.",
            "You may also be entitled to compensation, depending on the distance of the "
            "flight and on how much notice you were given. Compensation is not due when the "
            "cancellation was caused by extraordinary circumstances, such as severe weather, "
            "that the airline could not have avoided.",
            "Keep your boarding pass and the receipts of anything you paid for yourself, and "
            "make your claim to the airline in writing. If it refuses, you can take the claim "
            "to the national enforcement body of the country where the flight departed.",
        ),
        ("Was this page useful?", "Yes", "No", "Contact us"),
    ),
    (
        "Our history",
        "About the museum",
        (
            "The museum opened in 1902 in a former grain store by the river, with a collection "
            "of tools and household objects given by the families of the town. For its first "
            "fifty years it was run entirely by volunteers.",
            "In 1958 the town bought the building next door, and the museum doubled in size. "
            "The new rooms made space for the collection of boats and fishing gear, which is "
            "still the part of the museum most visitors come to see.",
            "Since the restoration of the grain store in 2010, the museum has also held "
            "temporary exhibitions, often in cooperation with the schools of the region, and "
            "its archive of photographs is open to researchers by appointment.",
        ),
        ("Opening hours", "Tuesday to Sunday, 10:00 to 17:00", "Admission free"),
    ),
)
"""Web pages: title, byline, paragraphs, and the short lines of page furniture after them."""

MENU = (
    "Home",
    "News",
    "Sport",
    "Business",
    "Culture",
    "Travel",
    "Weather",
    "Opinion",
    "Video",
    "Podcasts",
    "Newsletters",
    "Subscribe",
    "My account",
    "Contact us",
    "About us",
    "Careers",
    "Advertise",
    "Shop",
    "Events",
    "Jobs",
    "Property",
    "Motoring",
    "Food and drink",
    "Health",
    "Science",
    "Technology",
    "Education",
    "Local news",
    "World",
    "Politics",
    "Archive",
)
"""Entries of a navigation menu."""

LINK_TITLES = (
    "Annual report 2021",
    "How to apply",
    "Frequently asked questions",
    "Download the brochure",
    "Press releases",
    "Our partners",
    "Accessibility statement",
    "Sitemap",
    "Board of directors",
    "Volunteer with us",
    "Upcoming events",
    "Latest news",
    "Contact the press office",
    "Working with schools",
    "Research publications",
    "Data protection",
    "Media library",
    "Funding opportunities",
    "Job vacancies",
    "Visitor information",
    "Membership",
    "Donate",
)
"""Titles of the entries of a list of links."""

BOILERPLATE = (
    "We use cookies to improve your experience on our site; by continuing to browse you agree "
    "to our use of cookies.",
    "You need to enable JavaScript to run this app.",
    "Copyright 2023 Example Media Group. All rights reserved.",
    "Read our privacy policy and terms of use before you continue.",
    "Sign up for our newsletter to get the latest offers straight to your inbox.",
    "Please log in to continue reading this article.",
    "Click here to manage your cookie preferences.",
    "This site uses cookies; see our cookie policy for details.",
)
"""Boilerplate notices (each holds one of the configured boilerplate phrases)."""

TABLE_HEADINGS = ("Year", "Revenue", "Costs", "Margin", "Units", "Growth")
"""Column headings of the tables of numbers."""

REPEATED = (
    "Add to basket",
    "Free delivery on orders over 30 euros",
    "In stock",
    "Compare",
)
"""Lines a product listing repeats for every product."""
